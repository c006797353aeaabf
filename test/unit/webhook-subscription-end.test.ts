/**
 * The end of a per-operation (`operation.progress`) webhook subscription, over in-memory ports
 * with the real sender posting to a receiver on 127.0.0.1. The fan-out hands an operation's end
 * to delivery as a job without an event; delivery marks the subscription ended (retried on a
 * version conflict), lets the progress deliveries still pending go first, sends `terminated`
 * under a stable `webhook-id`, then deletes the subscription and gives its slot back.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryWebhookSubscriptions } from '../../lambdas/events/in-memory-webhook-subscriptions.ts';
import type { WebhookSubscription, WebhookSubscriptionStore } from '../../lambdas/events/webhook-subscription.ts';
import { eventEntry, OPERATION_ENDED, subscribeRequest, T0, webhookSetUp } from '../support/webhook-harness.ts';
import { webhookReceiverFixture } from '../support/webhook-receiver-fixture.ts';

const receiver = webhookReceiverFixture();

const progressRequest = () =>
  subscribeRequest(receiver(), { name: 'operation.progress', arguments: { operationId: 'op-1' }, url: `${receiver().origin}/progress` });
const endJob = (subscriptionId: string, attempt = 1) => ({ subscriptionId, ownerKey: 'owner-a', attempt });
const terminatedPosts = () => receiver().posts.filter((p) => p.body.includes('"terminated"'));

/** Answers `status` to every event and terminated body, while still echoing verifications. */
function answerDeliveries(status: number): void {
  receiver().handle = async (request) => {
    const body = (await request.json()) as { type?: string; challenge?: string };
    return body.type === 'verification' ? Response.json({ challenge: body.challenge }) : new Response(null, { status });
  };
}

describe('the end of a progress webhook subscription', () => {
  it('a retried terminated envelope keeps its webhook-id (msg_terminated_<stable>), so a receiver that dedupes on it processes it once', async () => {
    const { subscriptions, deliver, store } = webhookSetUp();
    const { id } = await subscriptions.subscribe(progressRequest());
    // Ended as the fan-out of today's main ends it: the ending is on the record, a job without an event follows.
    const stored = (await store.get('owner-a', id)) as WebhookSubscription;
    await store.save({ ...stored, ending: OPERATION_ENDED, version: stored.version + 1 }, stored.version);
    answerDeliveries(503);
    expect(await deliver(endJob(id, 1))).toMatchObject({ kind: 'retry' });
    answerDeliveries(204);
    expect(await deliver(endJob(id, 2))).toEqual({ kind: 'delivered' });
    const ids = terminatedPosts().map((p) => p.headers.get('webhook-id'));
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^msg_terminated_[0-9a-f]{32}$/);
    expect(ids[1]).toBe(ids[0]);
  });

  it('an end job marks the subscription ended itself, sends terminated, deletes it and gives its slot back', async () => {
    const { subscriptions, deliver, store } = webhookSetUp();
    const { id } = await subscriptions.subscribe(progressRequest());
    expect(await deliver(endJob(id))).toEqual({ kind: 'delivered' });
    expect(terminatedPosts().map((p) => JSON.parse(p.body))).toEqual([{ type: 'terminated', error: OPERATION_ENDED }]);
    expect(await store.get('owner-a', id)).toBeUndefined();
    expect((await store.getSlots('owner-a')).held).toEqual({});
  });

  it('a health write landing between the end read and its write does not lose the end: the end is retried on the version conflict', async () => {
    const base = new InMemoryWebhookSubscriptions();
    let raced = false;
    // The first write that ends the subscription loses its compare-and-set to a delivery's health write.
    const store: WebhookSubscriptionStore = {
      get: (ownerId, id) => base.get(ownerId, id),
      listByOwner: (ownerId) => base.listByOwner(ownerId),
      delete: (ownerId, id, version) => base.delete(ownerId, id, version),
      getSlots: (ownerId) => base.getSlots(ownerId),
      saveSlots: (ownerId, slots, version) => base.saveSlots(ownerId, slots, version),
      save: async (subscription, expectedVersion) => {
        if (subscription.ending && !raced) {
          raced = true;
          const current = (await base.get(subscription.ownerId, subscription.id)) as WebhookSubscription;
          const health = { ...current.health, attempts: current.health.attempts + 1, lastDeliveryAt: T0 };
          await base.save({ ...current, health, version: current.version + 1 }, current.version);
        }
        return base.save(subscription, expectedVersion);
      },
    };
    const { subscriptions, deliver } = webhookSetUp({ store });
    const { id } = await subscriptions.subscribe(progressRequest());
    expect(await deliver(endJob(id))).toEqual({ kind: 'delivered' });
    expect(raced).toBe(true);
    expect(terminatedPosts()).toHaveLength(1);
    expect(await base.get('owner-a', id)).toBeUndefined();
  });

  it('a progress delivery still pending at the end (a 503 retried 30 s later) is delivered before terminated, not dropped', async () => {
    const { subscriptions, deliver, store, log, clock } = webhookSetUp();
    const { id } = await subscriptions.subscribe(progressRequest());
    const progress = eventEntry({ eventId: 'evt_progress', name: 'operation.progress', data: { progress: 9, total: 10 } });
    await log.append(progress);
    const progressJob = (attempt: number) => ({ subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_progress', attempt });
    answerDeliveries(503);
    expect(await deliver(progressJob(1))).toMatchObject({ kind: 'retry', afterSeconds: 30 });
    answerDeliveries(204);
    // The operation ends while the last progress report waits for its retry: terminated waits too.
    clock.now = () => T0 + 1000;
    expect(await deliver(endJob(id, 1))).toMatchObject({ kind: 'retry' });
    expect(terminatedPosts()).toEqual([]);
    clock.now = () => T0 + 30_000;
    expect(await deliver(progressJob(2))).toEqual({ kind: 'delivered' });
    expect(await deliver(endJob(id, 2))).toEqual({ kind: 'delivered' });
    expect(
      receiver()
        .posts.filter((p) => !p.body.includes('"verification"'))
        .map((p) => [p.status, JSON.parse(p.body).type ?? JSON.parse(p.body).eventId]),
    ).toEqual([
      [503, 'evt_progress'],
      [204, 'evt_progress'],
      [204, 'terminated'],
    ]);
    expect(await store.get('owner-a', id)).toBeUndefined();
  });

  it('terminated waits for pending deliveries a bounded number of tries, then is sent anyway', async () => {
    const { subscriptions, deliver, log } = webhookSetUp();
    const { id } = await subscriptions.subscribe(progressRequest());
    await log.append(eventEntry({ eventId: 'evt_progress', name: 'operation.progress' }));
    answerDeliveries(503);
    await deliver({ subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_progress', attempt: 1 });
    answerDeliveries(204);
    // The retried progress job never comes back (lost): the end does not wait for ever.
    let attempt = 1;
    while ((await deliver(endJob(id, attempt))).kind === 'retry') attempt++;
    expect(attempt).toBeLessThanOrEqual(4);
    expect(terminatedPosts()).toHaveLength(1);
  });
});
