/**
 * The SQS delivery queue, loaded on first use: only a new occurrence with webhook
 * subscribers enqueues, so a cold start does not pay for importing the SQS client (about
 * 120 ms of module init, most of a poll's cold start beside the DynamoDB client).
 */
import type { WebhookDeliveryQueue } from '../events/webhook-delivery-job.ts';

export function lazySqsWebhookDeliveryQueue(queueUrl: string): WebhookDeliveryQueue {
  let loaded: Promise<WebhookDeliveryQueue> | undefined;
  const queue = () =>
    (loaded ??= Promise.all([import('@aws-sdk/client-sqs'), import('./sqs-webhook-delivery-queue.ts')]).then(
      ([{ SQSClient }, { SQS_CLIENT_CONFIG, SqsWebhookDeliveryQueue }]) => new SqsWebhookDeliveryQueue({ client: new SQSClient(SQS_CLIENT_CONFIG), queueUrl }),
    ));
  return { enqueue: async (jobs) => (await queue()).enqueue(jobs) };
}
