/**
 * The Events extension's part of the JSON-RPC error table (SEP-3415 "Error Handling"): its
 * codes, and the code of each of its errors. Kept apart from json-rpc-errors.ts, which
 * includes it, so that the functions that only append events (status sync, the workers)
 * carry no MCP SDK; all are answered in-band, HTTP 200.
 */
import type { EventsError, EventsErrorCode } from '../../events/events-error.ts';

/** The SEP's codes, provisional until it is accepted. */
export const EVENTS_JSONRPC = {
  /** "A referenced entity does not exist". */
  NOT_FOUND: -32023,
  /** "The authenticated principal is not permitted". */
  FORBIDDEN: -32024,
  /** "A server-imposed limit or quota was reached". */
  RESOURCE_EXHAUSTED: -32025,
  /** "a requested capability or option is not supported here". */
  UNSUPPORTED: -32026,
  /** "A client-supplied callback endpoint failed verification or could not be reached". */
  CALLBACK_ENDPOINT_ERROR: -32027,
} as const;

export const EVENTS_WIRE_ERROR_FOR: Record<EventsErrorCode, number> = {
  INVALID_PARAMS: -32602,
  NOT_FOUND: EVENTS_JSONRPC.NOT_FOUND,
  FORBIDDEN: EVENTS_JSONRPC.FORBIDDEN,
  RESOURCE_EXHAUSTED: EVENTS_JSONRPC.RESOURCE_EXHAUSTED,
  UNSUPPORTED: EVENTS_JSONRPC.UNSUPPORTED,
  CALLBACK_FAILED: EVENTS_JSONRPC.CALLBACK_ENDPOINT_ERROR,
};

/** The JSON-RPC error object of an Events error, for answers written outside the SDK (the push stream, `terminated` envelopes). */
export function eventsWireError(error: EventsError): { code: number; message: string; data?: Record<string, unknown> } {
  return { code: EVENTS_WIRE_ERROR_FOR[error.code], message: error.message, ...(error.data === undefined ? {} : { data: error.data }) };
}
