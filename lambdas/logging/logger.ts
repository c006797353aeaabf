/**
 * The logger port every layer writes through. Callers pass ids and error names, never tool
 * arguments, results or secrets. The core sees only this interface; the implementation
 * (Powertools JSON lines with the request context) is in observability/structured-logger.ts.
 */
import { createStructuredLogger } from '../observability/structured-logger.ts';

export interface Logger {
  error(message: string, fields: Record<string, unknown>): void;
  warn(message: string, fields: Record<string, unknown>): void;
  info?(message: string, fields: Record<string, unknown>): void;
  debug?(message: string, fields: Record<string, unknown>): void;
}

/** The process's structured logger (the default wherever none is passed). */
export const consoleLogger: Logger = createStructuredLogger();
