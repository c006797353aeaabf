/**
 * Late subscribe under a lagging index (issue 47, scenario 7): DynamoDB's owner index, which
 * both the subscribe's replay and the fan-out's listing read, may be half a second behind. A
 * webhook subscribed 300 ms after an operation's end, or just before it, still gets its job:
 * the guarantee does not rest on the index being current. The event log and the subscriptions
 * here are the in-memory stores with their index made to lag 500 ms, as DynamoDB's may; the
 * sender is the real one, posting to a receiver on 127.0.0.1.
 */
import { describe, expect, it, vi } from 'vitest';
import { timePosition } from '../../lambdas/events/event-log.ts';
import { resolveEventsSettings } from '../../lambdas/events/events-settings.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { InMemoryWebhookSubscriptions } from '../../lambdas/events/in-memory-webhook-subscriptions.ts';
import type { WebhookDeliveryJob } from '../../lambdas/events/webhook-delivery-job.ts';
import { WebhookFanOut } from '../../lambdas/events/webhook-fan-out.ts';
import { subscriptionIdFor } from '../../lambdas/events/webhook-subscription.ts';
import { WebhookSubscriptions, type SubscribeRequest } from '../../lambdas/events/webhook-subscriptions.ts';
import { createWebhookSender } from '../../lambdas/events/webhooks/webhook-sender.ts';
import { eventEntry, OPERATION_ENDED, subscribeRequest, T0 } from '../support/webhook-harness.ts';
import { webhookReceiverFixture } from '../support/webhook-receiver-fixture.ts';

const INDEX_LAG_MS = 500;

const receiver = webhookReceiverFixture();

function laggingSetUp() {
  const clock = { now: () => T0 };
  const jobs: WebhookDeliveryJob[] = [];
  const log = new InMemoryEventLog(clock, { indexLagMs: INDEX_LAG_MS });
  const store = new InMemoryWebhookSubscriptions({ indexLagMs: INDEX_LAG_MS });
  const subscriptions = new WebhookSubscriptions({
    store,
    log,
    send: createWebhookSender({ mode: 'local' }),
    queue: { enqueue: async (added) => void jobs.push(...added) },
    settings: resolveEventsSettings({ minSubscriptionTtlSeconds: 1 }),
    secretKey: async () => new Uint8Array(32).fill(9),
    clock,
    logger: { error: vi.fn(), warn: vi.fn() },
    operationEnded: OPERATION_ENDED,
  });
  return { clock, jobs, log, store, subscriptions, fanOut: new WebhookFanOut(subscriptions.deps) };
}

/** Starts `request`, and resolves once its subscription is stored (the subscribe itself may still be running). */
async function subscribing(setUp: ReturnType<typeof laggingSetUp>, request: SubscribeRequest) {
  const id = subscriptionIdFor(request.ownerId, request.url, request.name, request.arguments);
  const done = setUp.subscriptions.subscribe(request);
  await vi.waitFor(async () => expect(await setUp.store.get(request.ownerId, id)).toBeDefined(), { interval: 5 });
  return { id, done };
}

describe('the stores made to lag as DynamoDB may', () => {
  it('show a write in the owner listing and the stream read only after the lag, and by key at once', async () => {
    const { log, store } = laggingSetUp();
    const entry = eventEntry();
    await log.append(entry);
    const range = { after: timePosition(T0 - 1000), through: timePosition(T0 + 1), limit: 10 };
    const subscription = {
      ownerId: 'owner-a',
      id: 'sub_1',
      name: 'operation.finished',
      arguments: {},
      url: `${receiver().origin}/hook`,
      secrets: ['v1.sealed'],
      createdAt: T0,
      refreshedAt: T0,
      refreshBefore: null,
      startPosition: timePosition(T0 - 1000),
      active: true,
      health: { windowStart: T0, attempts: 0, failures: 0 },
      version: 1,
    };
    await store.save(subscription, undefined);
    expect((await log.read('owner-a', entry.stream, range)).entries).toEqual([]);
    expect(await store.listByOwner('owner-a')).toEqual([]);
    expect(await log.get('owner-a', entry.eventId)).toEqual(entry);
    expect(await store.get('owner-a', 'sub_1')).toEqual(subscription);
    await new Promise((resolve) => setTimeout(resolve, INDEX_LAG_MS + 20));
    expect((await log.read('owner-a', entry.stream, range)).entries).toEqual([entry]);
    expect(await store.listByOwner('owner-a')).toEqual([subscription]);
  });
});

describe('late subscribe under a lagging index', () => {
  it('a webhook subscribed to operation.finished 300 ms after the operation ended (cursor null) still gets a job for that end', async () => {
    const setUp = laggingSetUp();
    // The end is logged and fanned out while nobody is subscribed: the fan-out enqueues nothing.
    const end = eventEntry({ loggedAt: T0 - 300 });
    await setUp.log.append(end);
    expect(await setUp.fanOut.fanOut(end)).toBe(0);
    // The host subscribes before the index shows the end (300 ms later, the index 500 ms behind).
    const { id } = await setUp.subscriptions.subscribe(subscribeRequest(receiver(), { arguments: { operationId: 'op-1' }, cursor: null }));
    expect(setUp.jobs).toEqual([{ subscriptionId: id, ownerKey: 'owner-a', eventId: end.eventId, attempt: 1 }]);
  });

  it('a webhook subscribed to operation.finished just before the operation ended gets a job for that end, though the listing does not show it yet', async () => {
    const setUp = laggingSetUp();
    const { id, done } = await subscribing(setUp, subscribeRequest(receiver(), { arguments: { operationId: 'op-1' }, cursor: null }));
    // The end is logged and fanned out while the owner index does not show the new subscription yet.
    const end = eventEntry({ loggedAt: T0 + 300 });
    await setUp.log.append(end);
    await setUp.fanOut.fanOut(end);
    await done;
    expect(setUp.jobs).toContainEqual({ subscriptionId: id, ownerKey: 'owner-a', eventId: end.eventId, attempt: 1 });
  });

  it('a progress webhook subscribed just before its operation ended gets the job that ends it, though the listing does not show it yet', async () => {
    const setUp = laggingSetUp();
    const { id, done } = await subscribing(
      setUp,
      subscribeRequest(receiver(), { name: 'operation.progress', arguments: { operationId: 'op-1' }, url: `${receiver().origin}/progress` }),
    );
    const end = eventEntry({ loggedAt: T0 + 300 });
    await setUp.log.append(end);
    await setUp.fanOut.fanOut(end);
    await done;
    expect(setUp.jobs).toContainEqual({ subscriptionId: id, ownerKey: 'owner-a', attempt: 1 });
  });

  it('a progress webhook subscribed 300 ms after its operation ended gets its last report, then the job that ends it, owing that report', async () => {
    const setUp = laggingSetUp();
    await setUp.log.append(eventEntry({ eventId: 'evt_progress', name: 'operation.progress', loggedAt: T0 - 400, data: { progress: 10, total: 10 } }));
    await setUp.log.append(eventEntry({ eventId: 'evt_finished', loggedAt: T0 - 300 }));
    const { id } = await setUp.subscriptions.subscribe(
      subscribeRequest(receiver(), {
        name: 'operation.progress',
        arguments: { operationId: 'op-1' },
        url: `${receiver().origin}/progress`,
        cursor: timePosition(T0 - 60_000),
        operationEnded: true,
      }),
    );
    expect(setUp.jobs).toEqual([
      { subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_progress', attempt: 1 },
      { subscriptionId: id, ownerKey: 'owner-a', owed: ['evt_progress'], attempt: 1 },
    ]);
  });

  it('the end job of a progress webhook owes the last report, logged a moment before the end while the index does not show it yet', async () => {
    const setUp = laggingSetUp();
    const { id } = await setUp.subscriptions.subscribe(
      subscribeRequest(receiver(), { name: 'operation.progress', arguments: { operationId: 'op-1' }, url: `${receiver().origin}/progress` }),
    );
    const progress = eventEntry({ eventId: 'evt_progress', name: 'operation.progress', data: { progress: 9, total: 10 } });
    const end = eventEntry({ eventId: 'evt_finished' });
    for (const entry of [progress, end]) {
      await setUp.log.append(entry);
      await setUp.fanOut.fanOut(entry);
    }
    expect(setUp.jobs).toContainEqual({ subscriptionId: id, ownerKey: 'owner-a', owed: ['evt_progress'], attempt: 1 });
  });

  it('a progress webhook whose operation ends while it is being verified (the fan-out finds its slot, not yet its subscription) gets the job that ends it', async () => {
    const setUp = laggingSetUp();
    const end = eventEntry({ loggedAt: T0 });
    let fannedOut: number | undefined;
    receiver().handle = async (request) => {
      const body = (await request.json()) as { type?: string; challenge?: string };
      // The caller saw the operation running; it ends now, before the subscription is stored.
      if (body.type === 'verification' && fannedOut === undefined) {
        await setUp.log.append(end);
        fannedOut = await setUp.fanOut.fanOut(end);
      }
      return body.type === 'verification' ? Response.json({ challenge: body.challenge }) : new Response(null, { status: 204 });
    };
    const { id } = await setUp.subscriptions.subscribe(
      subscribeRequest(receiver(), { name: 'operation.progress', arguments: { operationId: 'op-1' }, url: `${receiver().origin}/progress` }),
    );
    expect(fannedOut).toBe(0);
    expect(setUp.jobs).toEqual([{ subscriptionId: id, ownerKey: 'owner-a', attempt: 1 }]);
  });
});
