/**
 * The one table that turns core errors into JSON-RPC errors (STYLE rule 5).
 * Dialects add their own wording on top, never their own codes for core errors.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type { Logger } from '../logging/logger.ts';
import { OperationError, type OperationErrorCode } from '../operations/operation-error.ts';

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
} as const;

const CODE_FOR: Record<OperationErrorCode, number> = {
  UNKNOWN_TOOL: JSONRPC.INVALID_PARAMS,
  INVALID_ARGUMENTS: JSONRPC.INVALID_PARAMS,
  INVALID_TOKEN: JSONRPC.INVALID_PARAMS,
  INVALID_CURSOR: JSONRPC.INVALID_PARAMS,
  TOKEN_REUSED: JSONRPC.INVALID_PARAMS,
  NOT_FOUND: JSONRPC.INVALID_PARAMS,
  EXPIRED: JSONRPC.INVALID_PARAMS,
  NOT_READY: JSONRPC.INVALID_PARAMS,
  CANCELED: JSONRPC.INVALID_PARAMS,
  NOT_CANCELABLE: JSONRPC.INVALID_PARAMS,
  INVOCATION_MISMATCH: JSONRPC.INVALID_REQUEST,
  INTERNAL: JSONRPC.INTERNAL_ERROR,
};

/**
 * Any thrown value as a ProtocolError. Internal failures are logged with the request
 * id and answered with a message that names what failed but carries no stack or secret.
 */
export function toProtocolError(error: unknown, requestId: unknown, logger: Logger, prefix?: string): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof OperationError) {
    const code = CODE_FOR[error.code];
    if (code === JSONRPC.INTERNAL_ERROR) logFailure(logger, error, requestId);
    const message = prefix && (error.code === 'NOT_FOUND' || error.code === 'EXPIRED') ? `${prefix}: ${error.message}` : error.message;
    return new ProtocolError(code, message, error.data);
  }
  logFailure(logger, error, requestId);
  return new ProtocolError(JSONRPC.INTERNAL_ERROR, 'Internal error: the server could not complete the request');
}

function logFailure(logger: Logger, error: unknown, requestId: unknown): void {
  const chain: string[] = [];
  for (let e: unknown = error; e instanceof Error && chain.length < 5; e = e.cause) chain.push(`${e.name}: ${e.message}`);
  logger.error('request failed', { requestId, error: chain.length ? chain.join(' <- ') : String(error) });
}

