/**
 * The error a per-operation subscription ends with when its operation reaches a terminal
 * status ("The server MUST terminate the event stream when the task reaches a terminal
 * status", Task Event Sources): one definition for the MCP function, which ends push streams
 * with it, and the delivery function, which sends it in `terminated` envelopes. Its JSON-RPC
 * code is the edge's to assign.
 */
import { EventsError } from './events-error.ts';

export function operationEndedError(): EventsError {
  return new EventsError('NOT_FOUND', 'The operation has ended; its progress subscription is over', { kind: 'operation', reason: 'operation_ended' });
}
