/**
 * One SQS batch of webhook delivery jobs: each record is one try of one job; `delivered` and
 * `dropped` leave the batch, `retry` postpones the message by the outcome's backoff and reports
 * it failed (ReportBatchItemFailures), so SQS redelivers it and, past maxReceiveCount, dead-letters it.
 */
import { describe, expect, it } from 'vitest';
import type { DeliverWebhookJob, WebhookDeliveryJob, WebhookDeliveryOutcome } from '../../lambdas/events/webhook-delivery-job.ts';
import { deliveryMessageOf, parseDeliveryMessage } from '../../lambdas/events/webhooks/delivery-message.ts';
import { createSqsDeliveryBatch, type SqsDeliveryRecord } from '../../lambdas/events/webhooks/sqs-delivery-batch.ts';

function recordingLogger() {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, fields: Record<string, unknown>) => void lines.push({ level, message, fields });
  return { lines, logger: { error: at('error'), warn: at('warn'), info: at('info') } };
}

const job = (subscriptionId: string, eventId?: string): WebhookDeliveryJob => ({
  subscriptionId,
  ownerKey: 'owner#alice',
  ...(eventId ? { eventId } : {}),
  attempt: 1,
});
const record = (messageId: string, body: string, receiveCount = '1'): SqsDeliveryRecord => ({
  messageId,
  receiptHandle: `rh-${messageId}`,
  body,
  attributes: { ApproximateReceiveCount: receiveCount },
});

function setUp(outcomes: Record<string, WebhookDeliveryOutcome | Error>, postponeFails = false) {
  const tried: WebhookDeliveryJob[] = [];
  const postponed: { receiptHandle: string; seconds: number }[] = [];
  const deliver: DeliverWebhookJob = async (j) => {
    tried.push(j);
    const outcome = outcomes[j.subscriptionId];
    if (!outcome) throw new Error(`no outcome for ${j.subscriptionId}`);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  };
  const retries = {
    postpone: async (receiptHandle: string, seconds: number) => {
      if (postponeFails) throw new Error('SQS unreachable');
      postponed.push({ receiptHandle, seconds });
    },
  };
  const { lines, logger } = recordingLogger();
  return { tried, postponed, lines, handle: createSqsDeliveryBatch({ deliver, retries, logger }) };
}

describe('a batch of webhook deliveries', () => {
  it('reports only the retried records failed, each postponed by its own backoff', async () => {
    const { handle, postponed, tried } = setUp({
      ok: { kind: 'delivered' },
      gone: { kind: 'dropped', reason: 'subscription expired' },
      busy: { kind: 'retry', afterSeconds: 30, reason: 'http_5xx' },
      slow: { kind: 'retry', afterSeconds: 120, reason: 'timeout' },
    });
    const out = await handle({
      Records: [
        record('m1', deliveryMessageOf(job('ok', 'e1'))),
        record('m2', deliveryMessageOf(job('gone', 'e1'))),
        record('m3', deliveryMessageOf(job('busy', 'e1')), '3'),
        record('m4', deliveryMessageOf(job('slow'))),
      ],
    });
    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: 'm3' }, { itemIdentifier: 'm4' }] });
    expect(postponed).toEqual([
      { receiptHandle: 'rh-m3', seconds: 30 },
      { receiptHandle: 'rh-m4', seconds: 120 },
    ]);
    // The attempt is the queue's receive count; a control job has no eventId.
    expect(tried.find((j) => j.subscriptionId === 'busy')).toEqual({ subscriptionId: 'busy', ownerKey: 'owner#alice', eventId: 'e1', attempt: 3 });
    expect(tried.find((j) => j.subscriptionId === 'slow')).toEqual({ subscriptionId: 'slow', ownerKey: 'owner#alice', attempt: 1 });
  });

  it('reports a delivery that throws failed, without postponing it (the visibility timeout brings it back)', async () => {
    const { handle, postponed, lines } = setUp({ broken: new Error('table unreachable') });
    expect(await handle({ Records: [record('m1', deliveryMessageOf(job('broken', 'e1')))] })).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(postponed).toEqual([]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'error', fields: expect.objectContaining({ messageId: 'm1', error: 'Error: table unreachable' }) }),
    );
  });

  it('still reports a retry failed when postponing it fails', async () => {
    const { handle } = setUp({ busy: { kind: 'retry', afterSeconds: 30, reason: 'http_5xx' } }, true);
    expect(await handle({ Records: [record('m1', deliveryMessageOf(job('busy', 'e1')))] })).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
  });

  it('drops, with an error logged, a message that is not a delivery job, and never calls deliver for it', async () => {
    const { handle, tried, lines } = setUp({});
    const bodies = [
      'not json',
      '{}',
      JSON.stringify({ subscriptionId: 's', ownerKey: 'o', secret: 'whsec_x' }),
      JSON.stringify({ subscriptionId: '', ownerKey: 'o' }),
    ];
    expect(await handle({ Records: bodies.map((body, index) => record(`m${index}`, body)) })).toEqual({ batchItemFailures: [] });
    expect(tried).toEqual([]);
    expect(lines.filter((line) => line.level === 'error')).toHaveLength(bodies.length);
  });

  it('never logs the owner key or the message body', async () => {
    const { handle, lines } = setUp({ busy: { kind: 'retry', afterSeconds: 5, reason: 'timeout' }, ok: { kind: 'delivered' } });
    await handle({
      Records: [record('m1', deliveryMessageOf(job('busy', 'e1'))), record('m2', deliveryMessageOf(job('ok', 'e2'))), record('m3', 'owner#alice garbage')],
    });
    expect(JSON.stringify(lines)).not.toContain('owner#alice');
  });

  it('a message carries the job without its attempt, and reads back with the receive count', () => {
    const body = deliveryMessageOf({ ...job('s1', 'e9'), attempt: 4 });
    expect(JSON.parse(body)).toEqual({ subscriptionId: 's1', ownerKey: 'owner#alice', eventId: 'e9' });
    expect(parseDeliveryMessage(body, 2)).toEqual({ subscriptionId: 's1', ownerKey: 'owner#alice', eventId: 'e9', attempt: 2 });
    expect(parseDeliveryMessage(body, Number.NaN)?.attempt).toBe(1);
  });
});
