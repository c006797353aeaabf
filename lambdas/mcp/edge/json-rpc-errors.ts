/**
 * The one table that turns core errors into JSON-RPC errors and, where the answer
 * needs one, an HTTP status (STYLE rule 5). Dialects add their own wording on top,
 * never their own codes for core errors.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type { Logger } from '../../operations/ports.ts';
import { EventsError } from '../../events/events-error.ts';
import { EVENTS_JSONRPC, EVENTS_WIRE_ERROR_FOR, eventsWireError } from './events-wire-errors.ts';
import { OperationError, type OperationErrorCode } from '../../operations/operation-error.ts';
import { isObject } from '../../shared/json-values.ts';
import { setHttpHeader, setHttpStatus } from './request-scope.ts';

export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** 2026-07-28: Mcp-Method / Mcp-Name header missing or not matching the body. */
  HEADER_MISMATCH: -32020,
  /** 2026-07-28: the request needs a capability the client did not declare. */
  MISSING_CAPABILITY: -32021,
  /**
   * Ours (implementation-defined server error range): the principal already has as many
   * active operations as the server allows. Answered with HTTP 429 and `Retry-After`.
   */
  TOO_MANY_ACTIVE_OPERATIONS: -32029,
  /** The Events extension's (SEP-3415): NOT_FOUND, FORBIDDEN, RESOURCE_EXHAUSTED, UNSUPPORTED, CALLBACK_ENDPOINT_ERROR. */
  ...EVENTS_JSONRPC,
} as const;

interface WireError {
  code: number;
  /** HTTP status for a single-message request; absent keeps the SDK's. */
  httpStatus?: number;
}

const WIRE_ERROR_FOR: Record<OperationErrorCode, WireError> = {
  INVALID_INPUT: { code: JSONRPC.INVALID_PARAMS },
  INVALID_CURSOR: { code: JSONRPC.INVALID_PARAMS },
  TOKEN_REUSED: { code: JSONRPC.INVALID_PARAMS },
  NOT_FOUND: { code: JSONRPC.INVALID_PARAMS },
  EXPIRED: { code: JSONRPC.INVALID_PARAMS },
  NOT_READY: { code: JSONRPC.INVALID_PARAMS },
  CANCELED: { code: JSONRPC.INVALID_PARAMS },
  LIMIT_EXCEEDED: { code: JSONRPC.TOO_MANY_ACTIVE_OPERATIONS, httpStatus: 429 },
  INTERNAL: { code: JSONRPC.INTERNAL_ERROR },
};

export { eventsWireError };

/**
 * Any thrown value as a ProtocolError. Internal failures are logged with the request
 * id and answered with a message that names what failed but carries no stack or secret.
 */
export function toProtocolError(error: unknown, requestId: unknown, logger: Logger, prefix?: string): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof EventsError) return new ProtocolError(EVENTS_WIRE_ERROR_FOR[error.code], error.message, error.data);
  if (error instanceof OperationError) {
    const { code, httpStatus } = WIRE_ERROR_FOR[error.code];
    if (code === JSONRPC.INTERNAL_ERROR) logFailure(logger, error, requestId);
    if (httpStatus !== undefined) setHttpStatus(httpStatus);
    if (error.code === 'LIMIT_EXCEEDED') return limitExceeded(error);
    const message = prefix && (error.code === 'NOT_FOUND' || error.code === 'EXPIRED') ? `${prefix}: ${error.message}` : error.message;
    return new ProtocolError(code, message, error.data);
  }
  logFailure(logger, error, requestId);
  return new ProtocolError(JSONRPC.INTERNAL_ERROR, 'Internal error: the server could not complete the request');
}

/**
 * "429 Too Many Requests ... MAY include a Retry-After header" (RFC 6585 §4). The core's
 * message names the limit; `data` carries it for programs.
 */
function limitExceeded(error: OperationError): ProtocolError {
  const data = isObject(error.data) ? error.data : {};
  const retryAfter = typeof data.retryAfterSeconds === 'number' ? Math.max(1, Math.ceil(data.retryAfterSeconds)) : undefined;
  if (retryAfter !== undefined) setHttpHeader('Retry-After', String(retryAfter));
  return new ProtocolError(JSONRPC.TOO_MANY_ACTIVE_OPERATIONS, error.message, error.data);
}

function logFailure(logger: Logger, error: unknown, requestId: unknown): void {
  const chain: string[] = [];
  for (let e: unknown = error; e instanceof Error && chain.length < 5; e = e.cause) chain.push(`${e.name}: ${e.message}`);
  logger.error('request failed', { requestId, error: chain.length ? chain.join(' <- ') : String(error) });
}
