/**
 * Puts `Operation Status Changed` events on an EventBridge bus, best-effort: status sync calls
 * it after the record write, so an event can never fail, delay or re-order the write it
 * reports. A rejected PutEvents, or an entry EventBridge did not take (`FailedEntryCount`), is
 * retried a bounded number of times with backoff, then logged and counted
 * (`OperationEventsFailed`), and status sync goes on.
 */
import { PutEventsCommand, type EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { Logger } from '../operations/ports.ts';
import { METRIC, noMetrics, type MetricsRecorder } from '../observability/metrics-recorder.ts';
import { OPERATION_EVENT_DETAIL_TYPE, OPERATION_EVENT_SOURCE, operationEventDetail, type OperationEventSink } from './operation-events.ts';

export interface OperationEventsPublisherOptions {
  client: Pick<EventBridgeClient, 'send'>;
  /** The bus's name or ARN (`default` for the account's default bus). */
  eventBusName: string;
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
  return async (record) => {
    const entry: PutEventsRequestEntry = {
      EventBusName: options.eventBusName,
      Source: OPERATION_EVENT_SOURCE,
      DetailType: OPERATION_EVENT_DETAIL_TYPE,
      Detail: JSON.stringify(operationEventDetail(record)),
      Time: new Date(record.updatedAt),
      ...(record.executionArn ? { Resources: [record.executionArn] } : {}),
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
    // The ids and the status only: the detail is safe to log, but nothing more is needed.
    options.logger.error('operation status event not delivered to EventBridge', {
      tool: record.tool,
      dialect: record.dialect,
      status: record.status,
      attempts: maxAttempts,
      error: failure,
    });
    metrics.count(METRIC.operationEventsFailed, { tool: record.tool });
  };
}
