/**
 * Puts `Operation Status Changed` events on an EventBridge bus, best-effort: status sync calls
 * it after the record write, so an event can never fail, delay or re-order the write it
 * reports. A rejected PutEvents, or an entry EventBridge did not take (`FailedEntryCount`), is
 * retried a bounded number of times with backoff, then logged and counted
 * (`OperationEventsFailed`), and status sync goes on.
 *
 * Whoever reads the bus or a rule's target must not be able to name an operation's owner: the
 * event names it by a keyed id (`eventOwnerIdFor`, the server key read on the first event),
 * and its resource is the state machine, not the execution, whose name is derived from the
 * unkeyed owner id (`executionNameFor`).
 */
import { PutEventsCommand, type EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { eventOwnerIdFor } from '../operations/fingerprint.ts';
import type { OperationRecord } from '../operations/operation.ts';
import type { Logger } from '../operations/ports.ts';
import { METRIC, noMetrics, type MetricsRecorder } from '../observability/metrics-recorder.ts';
import { EVENT_SPAN_ATTRIBUTES, occurrenceParent } from '../events/event-recorder.ts';
import { hashForLog } from '../observability/request-context.ts';
import { currentCarrier, SpanKind, withSpan } from '../observability/tracing.ts';
import { cachedServerKey } from '../shared/server-key.ts';
import {
  OPERATION_EVENT_DETAIL_TYPE,
  OPERATION_EVENT_SOURCE,
  operationEventDetail,
  type OperationEventSink,
  type OperationStatusChangedDetail,
} from './operation-events.ts';

export interface OperationEventsPublisherOptions {
  client: Pick<EventBridgeClient, 'send'>;
  /** The bus's name or ARN (`default` for the account's default bus). */
  eventBusName: string;
  /** The server's secret key (as the MCP function reads it), which keys each event's owner id. Called on the first event only. */
  serverKey: () => Promise<Uint8Array>;
  logger: Logger;
  metrics?: MetricsRecorder;
  /** PutEvents calls per event, the first included. @default 3 */
  maxAttempts?: number;
  /** The wait before the second attempt, doubled for each one after. @default 100 */
  backoffMs?: number;
}

/** The sink status sync emits through. */
export function createOperationEventsPublisher(options: OperationEventsPublisherOptions): OperationEventSink {
  const maxAttempts = options.maxAttempts ?? 3;
  const backoffMs = options.backoffMs ?? 100;
  const metrics = options.metrics ?? noMetrics;
  const serverKey = cachedServerKey(options.serverKey);

  const giveUp = (record: OperationRecord, attempts: number, failure: string) => {
    // The ids and the status only: the detail is safe to log, but nothing more is needed.
    options.logger.error('operation status event not delivered to EventBridge', {
      tool: record.tool,
      dialect: record.dialect,
      status: record.status,
      attempts,
      error: failure,
    });
    metrics.count(METRIC.operationEventsFailed, { tool: record.tool });
  };

  const publish = async (record: OperationRecord) => {
    let detail: OperationStatusChangedDetail;
    try {
      const trace = currentCarrier() ?? record.trace;
      detail = {
        ...operationEventDetail(record),
        ownerId: eventOwnerIdFor(record.ownerId, await serverKey()),
        ...(trace ? { traceparent: trace.traceparent, ...(trace.tracestate ? { tracestate: trace.tracestate } : {}) } : {}),
      };
    } catch (error) {
      // Never the unkeyed id instead: no event is better than one that names its owner.
      return giveUp(record, 0, `the server key could not be read (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})`);
    }
    const machine = record.executionArn ? stateMachineArnOf(record.executionArn) : undefined;
    const entry: PutEventsRequestEntry = {
      EventBusName: options.eventBusName,
      Source: OPERATION_EVENT_SOURCE,
      DetailType: OPERATION_EVENT_DETAIL_TYPE,
      Detail: JSON.stringify(detail),
      Time: new Date(record.updatedAt),
      ...(machine ? { Resources: [machine] } : {}),
    };
    let failure = '';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** (attempt - 2)));
      try {
        const output = await options.client.send(new PutEventsCommand({ Entries: [entry] }));
        if (!output.FailedEntryCount) return;
        const failed = output.Entries?.[0];
        failure = `${failed?.ErrorCode ?? 'FailedEntry'}: ${failed?.ErrorMessage ?? 'EventBridge did not take the entry'}`;
      } catch (error) {
        failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      }
    }
    giveUp(record, maxAttempts, failure);
  };

  // A span of the operation's trace (under status sync's when that one is in it): the event's traceparent names it.
  return (record) => {
    const parent = occurrenceParent(record.trace);
    const attributes = {
      [EVENT_SPAN_ATTRIBUTES.operationHash]: hashForLog(record.token),
      [EVENT_SPAN_ATTRIBUTES.tool]: record.tool,
      [EVENT_SPAN_ATTRIBUTES.eventName]: OPERATION_EVENT_DETAIL_TYPE,
    };
    return withSpan(`event ${OPERATION_EVENT_DETAIL_TYPE}`, { kind: SpanKind.PRODUCER, attributes, ...(parent ? { parent } : {}) }, () => publish(record));
  };
}

/** `arn:…:states:<region>:<account>:execution:<machine>:<name>` -> the machine's ARN. */
function stateMachineArnOf(executionArn: string): string | undefined {
  const match = /^(arn:[^:]+:states:[^:]+:\d{12}):execution:([^:]+):[^:]+$/.exec(executionArn);
  return match ? `${match[1]}:stateMachine:${match[2]}` : undefined;
}
