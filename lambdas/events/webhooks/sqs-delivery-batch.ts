/**
 * One SQS batch of webhook delivery jobs, as the delivery function gets it: each record one try
 * of one job, run through {@link DeliverWebhookJob}. `delivered` and `dropped` succeed (the message
 * is deleted); `retry` postpones the message by the outcome's backoff (its visibility timeout)
 * and reports it failed, so Lambda leaves it on the queue (`ReportBatchItemFailures`). After the
 * queue's maxReceiveCount, SQS moves it to the dead-letter queue.
 */
import type { Logger } from '../../operations/ports.ts';
import type { DeliverWebhookJob, WebhookDeliveryOutcome } from '../webhook-delivery-job.ts';
import { parseDeliveryMessage } from './delivery-message.ts';

/** The fields of an SQS event record this function reads. */
export interface SqsDeliveryRecord {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly attributes?: { readonly ApproximateReceiveCount?: string };
}

/** The SQS event Lambda's event source mapping invokes with. */
export interface SqsDeliveryEvent {
  readonly Records: readonly SqsDeliveryRecord[];
}

/** The partial batch response: the records to leave on the queue. */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** Makes a received message visible again after a delay. */
export interface RetryScheduler {
  postpone(receiptHandle: string, seconds: number): Promise<void>;
}

export interface SqsDeliveryBatchOptions {
  readonly deliver: DeliverWebhookJob;
  readonly retries: RetryScheduler;
  readonly logger: Logger;
}

/** The batch handler: all records at once (each try is bounded by the sender), failures reported per record. */
export function createSqsDeliveryBatch({ deliver, retries, logger }: SqsDeliveryBatchOptions): (event: SqsDeliveryEvent) => Promise<SqsBatchResponse> {
  async function tryRecord(record: SqsDeliveryRecord): Promise<boolean> {
    const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
    const job = parseDeliveryMessage(record.body, receiveCount);
    if (!job) {
      // Never valid however often it is received: retrying would only delay the dead-letter queue.
      logger.error('webhook delivery message is not a delivery job; dropped', { messageId: record.messageId });
      return true;
    }
    const fields = { messageId: record.messageId, subscriptionId: job.subscriptionId, attempt: job.attempt };
    let outcome: WebhookDeliveryOutcome;
    try {
      outcome = await deliver(job);
    } catch (error) {
      // Our own failure (the table unreachable...): the message comes back after the queue's visibility timeout.
      logger.error('webhook delivery failed', { ...fields, error: describe(error) });
      return false;
    }
    if (outcome.kind !== 'retry') {
      logger.info?.(`webhook delivery ${outcome.kind}`, { ...fields, ...(outcome.kind === 'dropped' ? { reason: outcome.reason } : {}) });
      return true;
    }
    logger.warn('webhook delivery will be retried', { ...fields, afterSeconds: outcome.afterSeconds, reason: outcome.reason });
    try {
      await retries.postpone(record.receiptHandle, outcome.afterSeconds);
    } catch (error) {
      logger.error('webhook delivery retry could not be postponed; it comes back after the visibility timeout', { ...fields, error: describe(error) });
    }
    return false;
  }

  return async (event) => {
    const done = await Promise.all(event.Records.map(tryRecord));
    return { batchItemFailures: event.Records.filter((_record, index) => !done[index]).map((record) => ({ itemIdentifier: record.messageId })) };
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
