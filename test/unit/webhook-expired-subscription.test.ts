/**
 * An expired webhook subscription is deleted by the delivery that finds it expired (the delivery
 * function may delete SUB# items; status sync, which lists them, may not), so listings do not
 * carry it for the day DynamoDB's TTL may take; a refresh that came first keeps it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
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

it('a delivery that finds its subscription expired deletes it, and drops the event', async () => {
  const { subscriptions, log, store, clock, deliver } = webhookSetUp();
  const { id } = await subscriptions.subscribe(subscribeRequest(receiver, { ttlMs: 5000 }));
  await log.append(eventEntry());
  clock.now = () => T0 + 6000;
  expect(await deliver({ subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_1', attempt: 1 })).toEqual({
    kind: 'dropped',
    reason: 'the subscription expired',
  });
  expect(await store.get('owner-a', id)).toBeUndefined();
  expect(await store.listByOwner('owner-a')).toEqual([]);
});

it('a subscription refreshed after the delivery read it is not deleted', async () => {
  const { subscriptions, log, store, clock, deliver } = webhookSetUp();
  const request = subscribeRequest(receiver, { ttlMs: 5000 });
  const { id } = await subscriptions.subscribe(request);
  await log.append(eventEntry());
  const read = store.get.bind(store);
  // The delivery reads the lapsed subscription; the host refreshes it before the delivery acts.
  store.get = async (ownerId, subscriptionId) => {
    const seen = await read(ownerId, subscriptionId);
    store.get = read;
    clock.now = () => T0 + 6000;
    await subscriptions.subscribe({ ...request, ttlMs: 60_000 });
    return seen;
  };
  clock.now = () => T0 + 6000;
  expect((await deliver({ subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_1', attempt: 1 })).kind).toBe('dropped');
  expect(await store.get('owner-a', id)).toBeDefined();
});
