/**
 * The `Logger` port over Powertools Logger: one JSON line per entry (warn and error on
 * stderr, info and debug on stdout), which CloudWatch Logs Insights queries by field. Every
 * line carries the current request's context (request-context.ts); a field the caller
 * passes wins over the context's.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { Logger } from '../operations/ports.ts';
import { requestLogFields } from './request-context.ts';

/** The service name on every log line and metric (`POWERTOOLS_SERVICE_NAME` overrides it). */
export const SERVICE_NAME = 'async-mcp';

export interface StructuredLoggerOptions {
  /** @default POWERTOOLS_SERVICE_NAME, else `async-mcp` */
  serviceName?: string;
  /** @default POWERTOOLS_LOG_LEVEL (or Lambda's log level), else INFO */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

/** A Logger writing Powertools JSON lines, each with the request context. */
export function createStructuredLogger(options: StructuredLoggerOptions = {}): Logger {
  const powertools = new PowertoolsLogger({
    serviceName: options.serviceName ?? (process.env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME),
    ...(options.logLevel ? { logLevel: options.logLevel } : {}),
  });
  const withContext = (fields: Record<string, unknown> | undefined) => ({ ...knownFields(requestLogFields()), ...fields });
  return {
    error: (message, fields) => powertools.error(message, withContext(fields)),
    warn: (message, fields) => powertools.warn(message, withContext(fields)),
    info: (message, fields) => powertools.info(message, withContext(fields)),
    debug: (message, fields) => powertools.debug(message, withContext(fields)),
  };
}

/** The context's fields that are set: a context holds every field, unset ones `undefined`. */
function knownFields(context: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const known: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(context ?? {})) if (value !== undefined) known[name] = value;
  return known;
}
