/**
 * The SQS adapter of the Events extension's {@link WebhookDeliveryQueue}: each job one message,
 * sent ten to a SendMessageBatch (SQS's limit). The message body is the job's JSON and nothing
 * more (delivery-message.ts): no event body and no secret ever sits in the queue.
 */
import {
  ChangeMessageVisibilityCommand,
  type SendMessageBatchRequestEntry,
  SendMessageBatchCommand,
  type SQSClient,
  type SQSClientConfig,
} from '@aws-sdk/client-sqs';
import type { WebhookDeliveryJob, WebhookDeliveryQueue } from '../events/webhook-delivery-job.ts';
import { deliveryMessageOf } from '../events/webhooks/delivery-message.ts';
import type { RetryScheduler } from '../events/webhooks/sqs-delivery-batch.ts';
import { AWS_CLIENT_CONFIG } from './aws-client-config.ts';

/** SQS takes at most ten entries per SendMessageBatch. */
export const SQS_BATCH_LIMIT = 10;

/**
 * How the functions that enqueue build their SQS client: each call bounded (1 s to connect, 3 s to
 * answer), so an unreachable SQS costs seconds on status sync's path, never its timeout. Requests
 * go to the client's endpoint (the Region's, or AWS_ENDPOINT_URL_SQS), never to the host a queue
 * URL names: the SDK's default follows the URL, which as deployed locally is AWS's own host.
 */
export const SQS_CLIENT_CONFIG = {
  ...AWS_CLIENT_CONFIG,
  useQueueUrlAsEndpoint: false,
  maxAttempts: 2,
  requestHandler: { connectionTimeout: 1000, requestTimeout: 3000, throwOnRequestTimeout: true },
} as const satisfies SQSClientConfig;

/** Some jobs could not be enqueued, after one retry of the failed entries. */
export class DeliveryQueueError extends Error {
  constructor(
    message: string,
    readonly failedJobs: readonly WebhookDeliveryJob[],
  ) {
    super(message);
    this.name = 'DeliveryQueueError';
  }
}

/** SQS's longest visibility timeout: 12 hours. */
export const MAX_VISIBILITY_SECONDS = 43_200;

/** Enqueues jobs on one SQS queue, by URL, and postpones a received one's next try. */
export class SqsWebhookDeliveryQueue implements WebhookDeliveryQueue, RetryScheduler {
  constructor(private readonly options: { readonly client: SQSClient; readonly queueUrl: string }) {}

  async enqueue(jobs: readonly WebhookDeliveryJob[]): Promise<void> {
    const failed: WebhookDeliveryJob[] = [];
    const reasons = new Set<string>();
    for (let start = 0; start < jobs.length; start += SQS_BATCH_LIMIT) {
      const batch = jobs.slice(start, start + SQS_BATCH_LIMIT);
      let pending = batch.map((job, index) => ({
        job,
        entry: { Id: String(index), MessageBody: deliveryMessageOf(job) } satisfies SendMessageBatchRequestEntry,
      }));
      // One retry of the entries SQS failed without blaming the sender; a sender fault would fail again.
      for (let round = 0; round < 2 && pending.length > 0; round++) {
        const out = await this.options.client.send(
          new SendMessageBatchCommand({ QueueUrl: this.options.queueUrl, Entries: pending.map((item) => item.entry) }),
        );
        const failures = new Map((out.Failed ?? []).map((failure) => [failure.Id, failure]));
        const again = pending.filter((item) => {
          const failure = failures.get(item.entry.Id);
          if (!failure) return false;
          if (failure.SenderFault || round === 1) {
            failed.push(item.job);
            reasons.add(failure.Code ?? 'unknown');
            return false;
          }
          return true;
        });
        pending = again;
      }
    }
    if (failed.length > 0)
      throw new DeliveryQueueError(`${failed.length} of ${jobs.length} webhook deliveries could not be queued (${[...reasons].join(', ')})`, failed);
  }

  /** The received message becomes visible again after `seconds`: the backoff of its next try. */
  async postpone(receiptHandle: string, seconds: number): Promise<void> {
    const timeout = Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil(seconds)));
    await this.options.client.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: this.options.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: timeout }),
    );
  }
}
