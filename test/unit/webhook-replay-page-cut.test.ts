/**
 * A subscription's replay reads the log as every reader must: a read may stop at a page cut
 * (DynamoDB stops a Query at 1 MB, a handful of large `operation.finished` entries), and the
 * replay goes on from where the read stopped instead of enqueueing the first page only.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../../lambdas/events/event-log.ts';
import { timePosition } from '../../lambdas/events/event-log.ts';
import { answerVerifications, eventEntry, subscribeRequest, T0, webhookSetUp } from '../support/webhook-harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  answerVerifications(receiver);
});
afterAll(async () => {
  await receiver?.close();
});

/** The log, cutting every read after two entries as a 1 MB page cut does. */
function cutEveryTwo(log: EventLog): void {
  const read = log.read.bind(log);
  log.read = async (ownerId, stream, range) => {
    const page = await read(ownerId, stream, { ...range, limit: Math.min(range.limit, 2) });
    return page.entries.length === 2 ? { ...page, more: true } : page;
  };
}

it('a webhook subscribed with a cursor before six large results, cut into pages, replays all six', async () => {
  const { subscriptions, jobs, log } = webhookSetUp();
  cutEveryTwo(log);
  for (let i = 1; i <= 6; i++) await log.append(eventEntry({ eventId: `evt_${i}`, operationId: `op-${i}`, loggedAt: T0 - 60_000 + i }));
  const { id } = await subscriptions.subscribe(subscribeRequest(receiver, { cursor: timePosition(T0 - 120_000) }));
  expect(jobs.map((job) => job.eventId)).toEqual(['evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_5', 'evt_6']);
  expect(jobs.every((job) => job.subscriptionId === id)).toBe(true);
});
