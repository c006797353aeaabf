/**
 * The local event source mapping for SQS: pollers receive with the function role's client, invoke
 * the function with Lambda's SQS event, delete what succeeded, and with ReportBatchItemFailures
 * leave the named items on the queue. Here the function is the webhook delivery batch handler
 * itself, over the SQS adapter, so a retry is postponed by its backoff and comes back with its
 * attempt counted, and one that keeps failing ends in the dead-letter queue.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { SqsWebhookDeliveryQueue } from '../../lambdas/aws/sqs-webhook-delivery-queue.ts';
import type { DeliverWebhookJob, WebhookDeliveryJob, WebhookDeliveryOutcome } from '../../lambdas/events/webhook-delivery-job.ts';
import { createSqsDeliveryBatch } from '../../lambdas/events/webhooks/sqs-delivery-batch.ts';
import { startLocalSqs } from '../../local/sqs/local-sqs.ts';
import { type SqsEvent, startSqsEventSource } from '../../local/sqs/sqs-event-source.ts';

const scope = { region: 'us-east-1', accountId: '000000000000' };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const silent = { error: () => undefined, warn: () => undefined, info: () => undefined };

/** Resolves when `check` holds, checked after each invocation. */
function waiter() {
  const pending: { check: () => boolean; resolve: () => void }[] = [];
  return {
    until: (check: () => boolean) => new Promise<void>((resolve) => (check() ? resolve() : pending.push({ check, resolve }))),
    changed: () => {
      for (const entry of [...pending]) {
        if (entry.check()) {
          pending.splice(pending.indexOf(entry), 1);
          entry.resolve();
        }
      }
    },
  };
}

async function setUp(options: {
  deliver?: DeliverWebhookJob;
  invoke?: (event: SqsEvent) => Promise<unknown>;
  maxReceiveCount?: number;
  visibilityTimeoutSeconds?: number;
  maxConcurrency?: number;
}) {
  const sqs = await startLocalSqs({
    ...scope,
    queues: [
      {
        name: 'deliveries',
        visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 30,
        redrive: { deadLetterQueueName: 'deliveries-dlq', maxReceiveCount: options.maxReceiveCount ?? 5 },
      },
      { name: 'deliveries-dlq' },
    ],
  });
  const client = new SQSClient({ region: scope.region, endpoint: sqs.endpoint, credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } });
  const queueUrl = sqs.queueUrl('deliveries');
  const queue = new SqsWebhookDeliveryQueue({ client, queueUrl });
  const events = waiter();
  const invocations: SqsEvent[] = [];
  const handler = options.deliver ? createSqsDeliveryBatch({ deliver: options.deliver, retries: queue, logger: silent }) : undefined;
  const source = startSqsEventSource({
    client,
    queueUrl,
    queueArn: 'arn:aws:sqs:us-east-1:000000000000:deliveries',
    region: scope.region,
    reportBatchItemFailures: true,
    maxConcurrency: options.maxConcurrency ?? 2,
    logger: silent,
    invoke: async (event) => {
      invocations.push(event);
      try {
        return await (handler ?? options.invoke)?.(event);
      } finally {
        setImmediate(events.changed);
      }
    },
  });
  cleanups.push(async () => {
    await source.close();
    client.destroy();
    await sqs.close();
  });
  return { sqs, queue, events, invocations, source };
}

/** A delivery that records each job it is given and answers the outcome for that try. */
function recording(tried: WebhookDeliveryJob[], outcome: (tries: number) => WebhookDeliveryOutcome): DeliverWebhookJob {
  return async (j) => {
    tried.push(j);
    return outcome(tried.length);
  };
}

const job = (subscriptionId: string): WebhookDeliveryJob => ({ subscriptionId, ownerKey: 'owner#alice', eventId: `evt_${subscriptionId}`, attempt: 1 });

describe('the local SQS event source', () => {
  it('invokes with the SQS event Lambda builds, and deletes what was delivered', async () => {
    const tried: WebhookDeliveryJob[] = [];
    const { sqs, queue, events, invocations, source } = await setUp({ deliver: recording(tried, () => ({ kind: 'delivered' })) });
    await queue.enqueue([job('a'), job('b')]);
    await events.until(() => tried.length === 2);
    await source.idle();
    expect(tried.map((j) => j.subscriptionId).sort()).toEqual(['a', 'b']);
    expect(invocations[0]?.Records[0]).toMatchObject({
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:deliveries',
      awsRegion: 'us-east-1',
      attributes: { ApproximateReceiveCount: '1' },
    });
    expect(sqs.queues.get('deliveries')?.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('a retried job comes back after its backoff with its attempt counted, and is delivered then', async () => {
    const tried: WebhookDeliveryJob[] = [];
    const outcomes: WebhookDeliveryOutcome[] = [{ kind: 'retry', afterSeconds: 0, reason: 'http_5xx' }, { kind: 'delivered' }];
    const { sqs, queue, events, source } = await setUp({ deliver: recording(tried, (tries) => outcomes[tries - 1] ?? { kind: 'delivered' }) });
    await queue.enqueue([job('flaky')]);
    await events.until(() => tried.length === 2);
    await source.idle();
    expect(tried.map((j) => j.attempt)).toEqual([1, 2]);
    expect(sqs.queues.get('deliveries')?.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('a job retried past maxReceiveCount goes to the dead-letter queue', async () => {
    const tried: WebhookDeliveryJob[] = [];
    const { sqs, queue, events, source } = await setUp({
      maxReceiveCount: 3,
      deliver: recording(tried, () => ({ kind: 'retry', afterSeconds: 0, reason: 'timeout' })),
    });
    await queue.enqueue([job('dead')]);
    await events.until(() => sqs.queues.get('deliveries-dlq')?.counts().visible === 1);
    await source.idle();
    expect(tried.map((j) => j.attempt)).toEqual([1, 2, 3]);
    expect(sqs.queues.get('deliveries')?.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('a function error leaves the whole batch; an answer naming no message of the batch fails it whole', async () => {
    let calls = 0;
    // No visibility timeout and one poller: a batch left on the queue comes straight back to it.
    const { sqs, queue, events, source } = await setUp({
      visibilityTimeoutSeconds: 0,
      maxConcurrency: 1,
      invoke: async (event) => {
        calls++;
        if (calls === 1) throw new Error('function error');
        if (calls === 2) return { batchItemFailures: [{ itemIdentifier: `not-${event.Records[0]?.messageId}` }] };
        return { batchItemFailures: [] };
      },
    });
    await queue.enqueue([job('x')]);
    await events.until(() => calls >= 3);
    await source.idle();
    expect(sqs.queues.get('deliveries')?.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });
});
