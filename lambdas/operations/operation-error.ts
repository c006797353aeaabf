/**
 * The core's error family. Codes are protocol-neutral strings; the MCP edge maps
 * each to a JSON-RPC code and HTTP status in exactly one table.
 */
export type OperationErrorCode =
  /** Input the core refuses before writing anything: an oversized id or arguments past the engine's limit. */
  | 'INVALID_INPUT'
  | 'INVALID_CURSOR'
  | 'TOKEN_REUSED'
  | 'NOT_FOUND'
  | 'EXPIRED'
  | 'NOT_READY'
  | 'CANCELED'
  /** The principal has too many active operations; `data` is `{ limit, retryAfterSeconds }`. */
  | 'LIMIT_EXCEEDED'
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
