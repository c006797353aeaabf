/**
 * The `Operation Status Changed` events status sync puts on EventBridge, so teams can wire
 * long jobs into their own systems with rules. An event leaves the server's trust boundary:
 * it names the operation and how it ended, never its arguments or its result (only the
 * result's size). The shape is `schemas/operation-status-changed.schema.json`.
 */
import type { Dialect, OperationRecord, OperationStatus, Outcome } from '../operations/operation.ts';
import { isTerminal } from '../operations/operation.ts';

/** The events' `source`. */
export const OPERATION_EVENT_SOURCE = 'async-mcp';
/** The events' `detail-type`. */
export const OPERATION_EVENT_DETAIL_TYPE = 'Operation Status Changed';

/** The `detail` of an `Operation Status Changed` event. */
export interface OperationStatusChangedDetail {
  /** The tool called. */
  tool: string;
  /**
   * The id the client knows the operation by: the `taskId` (Tasks dialects), the SEP-1391
   * `token`, or the handle tools' `operationId`. Unique per owner, not across owners.
   */
  operationId: string;
  /** Which wire started it, which says what kind of id `operationId` is. */
  dialect: Dialect;
  /**
   * The owner: an HMAC under the server key of the id the operations table keys it by
   * (`eventOwnerIdFor`). Stable for a principal while the key is; without the key, no reader
   * can test a candidate principal against it.
   */
  ownerId: string;
  status: OperationStatus;
  statusMessage?: string;
  /** ISO 8601 times. */
  createdAt: string;
  updatedAt: string;
  /** Present once the operation is finished. */
  completedAt?: string;
  /** Finished operations only: whether the client reads an error (a tool failure, a failure, a protocol error). */
  isError?: boolean;
  /** Finished operations with a result only: the size of the result the client reads, in UTF-8 bytes. */
  resultBytes?: number;
  /**
   * The W3C context of the span that published the event, in the operation's trace (present when
   * the operation is traced): a rule's API destination can send it on as the `traceparent` header.
   */
  traceparent?: string;
  tracestate?: string;
}

/** The detail but its owner, which only the holder of the server key can name. */
export type OperationEventFields = Omit<OperationStatusChangedDetail, 'ownerId'>;

/** Emits one event for a record status sync has just written; never throws (see operation-events-publisher.ts). */
export type OperationEventSink = (record: OperationRecord) => Promise<void>;

/**
 * The event detail of `record`, without its arguments or result, and without its owner: the
 * record's own owner id is an unkeyed hash of the principal, so the publisher adds the keyed one.
 */
export function operationEventDetail(record: OperationRecord): OperationEventFields {
  const finished = isTerminal(record.status);
  const bytes = finished ? resultBytesOf(record.outcome) : undefined;
  return {
    tool: record.tool,
    operationId: record.token,
    dialect: record.dialect,
    status: record.status,
    ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
    createdAt: new Date(record.createdAt).toISOString(),
    updatedAt: new Date(record.updatedAt).toISOString(),
    ...(finished && record.completedAt !== undefined ? { completedAt: new Date(record.completedAt).toISOString() } : {}),
    ...(finished ? { isError: isErrorOf(record.status, record.outcome) } : {}),
    ...(bytes === undefined ? {} : { resultBytes: bytes }),
  };
}

function isErrorOf(status: OperationStatus, outcome: Outcome | undefined): boolean {
  if (status === 'failed') return true;
  if (status === 'canceled') return false;
  switch (outcome?.kind) {
    case 'call-tool-result':
      return outcome.result.isError === true;
    case 'tool-error':
    case 'protocol-error':
    case 'internal-error':
      return true;
    default:
      return false;
  }
}

/** Bytes of the result the client reads; none for a finish without a result (an error, a cancel). */
function resultBytesOf(outcome: Outcome | undefined): number | undefined {
  switch (outcome?.kind) {
    case 'call-tool-result':
      return Buffer.byteLength(JSON.stringify(outcome.result));
    case 'result':
      return Buffer.byteLength(JSON.stringify(outcome.output) ?? 'null');
    case 'stored-result':
      return outcome.bytes;
    default:
      return undefined;
  }
}
