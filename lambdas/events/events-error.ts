/**
 * The Events extension's error family, protocol-neutral like `OperationError`: string
 * codes here, their JSON-RPC codes (SEP-3415 "Error Handling") in the one table at the
 * edge (json-rpc-errors.ts).
 */
export type EventsErrorCode =
  /** A request that is statically invalid: arguments, callback URL, secret, cursor. `data.field` names the field. */
  | 'INVALID_PARAMS'
  /** An unknown event name, an operation that is not the caller's, or no such subscription. `data.kind` says which. */
  | 'NOT_FOUND'
  /** The principal may not do this (webhooks need an authenticated principal). */
  | 'FORBIDDEN'
  /** A per-principal limit was reached; `data` is `{ limit, max }`. */
  | 'RESOURCE_EXHAUSTED'
  /** Well-formed, but not offered here (a delivery mode, no expiry); `data` names the feature. */
  | 'UNSUPPORTED'
  /** The callback endpoint failed verification or could not be reached; `data.reason` is a category. */
  | 'CALLBACK_FAILED';

export class EventsError extends Error {
  constructor(
    readonly code: EventsErrorCode,
    message: string,
    readonly data?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EventsError';
  }
}
