/**
 * The core's error family. Codes are protocol-neutral strings; the MCP edge maps
 * each to a JSON-RPC code and HTTP status in exactly one table.
 */
export type OperationErrorCode =
  | 'UNKNOWN_TOOL'
  | 'INVALID_ARGUMENTS'
  | 'INVALID_TOKEN'
  | 'INVALID_CURSOR'
  | 'TOKEN_REUSED'
  | 'NOT_FOUND'
  | 'EXPIRED'
  | 'NOT_READY'
  | 'CANCELED'
  | 'NOT_CANCELABLE'
  | 'INVOCATION_MISMATCH'
  | 'INTERNAL';

export class OperationError extends Error {
  constructor(
    readonly code: OperationErrorCode,
    message: string,
    options?: { cause?: unknown; data?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OperationError';
    this.data = options?.data;
  }

  readonly data: unknown;
}
