/**
 * Webhook subscriptions over in-memory ports, with the real sender posting to a receiver on
 * 127.0.0.1: subscription identity, TTL grants, caps, verification and its cache, fan-out,
 * and each outcome of one delivery try (delivered, retry with backoff, final answers,
 * exhausted retries, suspension, expiry, the terminated envelope).
 */
import { describe, expect, it, vi } from 'vitest';
import { streamOf, timePosition, type EventEntry } from '../../lambdas/events/event-log.ts';
import { EVENTS_DEFAULTS, resolveEventsSettings, type EventsSettingsInput } from '../../lambdas/events/events-settings.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { InMemoryWebhookSubscriptions } from '../../lambdas/events/in-memory-webhook-subscriptions.ts';
import { createDeliverWebhookJob } from '../../lambdas/events/webhook-delivery.ts';
import type { WebhookDeliveryJob } from '../../lambdas/events/webhook-delivery-job.ts';
import { subscriptionIdFor } from '../../lambdas/events/webhook-subscription.ts';
import { WebhookFanOut } from '../../lambdas/events/webhook-fan-out.ts';
import { WebhookSubscriptions } from '../../lambdas/events/webhook-subscriptions.ts';
import { generateWebhookSecret, parseWebhookSecret, type WebhookSecret } from '../../lambdas/events/webhooks/webhook-secret.ts';
import { createWebhookSender } from '../../lambdas/events/webhooks/webhook-sender.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { webhookReceiverFixture } from '../support/webhook-receiver-fixture.ts';

const T0 = 1_760_000_000_000;
const SERVER_KEY = new Uint8Array(32).fill(9);

const receiver = webhookReceiverFixture();

function secret(): WebhookSecret {
  const parsed = parseWebhookSecret(generateWebhookSecret());
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.secret;
}

function setUp(settings: EventsSettingsInput = {}) {
  const clock = { now: () => T0 };
  const jobs: WebhookDeliveryJob[] = [];
  const log = new InMemoryEventLog(clock);
  const store = new InMemoryWebhookSubscriptions();
  const subscriptions = new WebhookSubscriptions({
    store,
    log,
    send: createWebhookSender({ mode: 'local' }),
    queue: { enqueue: async (added) => void jobs.push(...added) },
    settings: resolveEventsSettings({ minSubscriptionTtlSeconds: 1, ...settings }),
    secretKey: async () => SERVER_KEY,
    clock,
    logger: { error: vi.fn(), warn: vi.fn() },
    operationEnded: { code: -32023, message: 'The operation has ended', data: { reason: 'operation_ended' } },
  });
  return { clock, jobs, log, store, subscriptions, deliver: createDeliverWebhookJob(subscriptions) };
}

const url = (path: string) => `${receiver().origin}${path}`;
const request = (overrides: Partial<Parameters<WebhookSubscriptions['subscribe']>[0]> = {}) => ({
  ownerId: 'owner-a',
  name: 'operation.finished',
  arguments: {},
  url: url('/hook'),
  secret: secret(),
  cursor: null,
  ...overrides,
});

function entry(overrides: Partial<EventEntry> = {}): EventEntry {
  const name = overrides.name ?? 'operation.finished';
  const operationId = overrides.operationId ?? 'op-1';
  return {
    ownerId: 'owner-a',
    eventId: 'evt_1',
    name,
    stream: streamOf(name, operationId),
    at: T0,
    operationId,
    tool: 'analyze_dataset',
    data: { status: 'completed' },
    expiresAt: T0 / 1000 + 3600,
    ...overrides,
    loggedAt: overrides.loggedAt ?? T0,
  };
}

describe('subscription identity', () => {
  it('derives one id from (principal, url, name, arguments), whatever the order of the arguments, and another for any other part', () => {
    const id = subscriptionIdFor('owner-a', 'https://a.example/h', 'operation.finished', { operationId: 'x', tool: 't' });
    expect(id).toMatch(/^sub_[0-9a-f]{32}$/);
    expect(subscriptionIdFor('owner-a', 'https://a.example/h', 'operation.finished', { tool: 't', operationId: 'x' })).toBe(id);
    for (const other of [
      subscriptionIdFor('owner-b', 'https://a.example/h', 'operation.finished', { operationId: 'x', tool: 't' }),
      subscriptionIdFor('owner-a', 'https://b.example/h', 'operation.finished', { operationId: 'x', tool: 't' }),
      subscriptionIdFor('owner-a', 'https://a.example/h', 'operation.progress', { operationId: 'x', tool: 't' }),
      subscriptionIdFor('owner-a', 'https://a.example/h', 'operation.finished', { operationId: 'y', tool: 't' }),
    ]) {
      expect(other).not.toBe(id);
    }
  });

  it('subscribe is an idempotent upsert: the same key again is the same subscription, granted again, not verified again', async () => {
    const { subscriptions, store, clock } = setUp();
    const first = await subscriptions.subscribe(request());
    clock.now = () => T0 + 10_000;
    const again = await subscriptions.subscribe(request());
    expect(again.id).toBe(first.id);
    expect(again.refreshBefore).toBe(T0 + 10_000 + EVENTS_DEFAULTS.maxSubscriptionTtlSeconds * 1000);
    expect(await store.listByOwner('owner-a')).toHaveLength(1);
    expect(receiver().posts.filter((p) => p.body.includes('"verification"'))).toHaveLength(1);
  });

  it('keeps the signing secret sealed in the store', async () => {
    const { subscriptions, store } = setUp();
    const given = secret();
    const { id } = await subscriptions.subscribe(request({ secret: given }));
    const stored = JSON.stringify(await store.get('owner-a', id));
    expect(stored).not.toContain(given.text);
    expect(stored).not.toContain(given.text.slice('whsec_'.length));
  });
});

describe('TTL grants', () => {
  it('"The client suggests, the server decides": the default, a clamp to the maximum and the minimum, and no expiry only when allowed', async () => {
    const { subscriptions } = setUp({ maxSubscriptionTtlSeconds: 600, minSubscriptionTtlSeconds: 60 });
    expect((await subscriptions.subscribe(request({ url: url('/a') }))).refreshBefore).toBe(T0 + 600_000);
    expect((await subscriptions.subscribe(request({ url: url('/b'), ttlMs: 86_400_000 }))).refreshBefore).toBe(T0 + 600_000);
    expect((await subscriptions.subscribe(request({ url: url('/c'), ttlMs: 5 }))).refreshBefore).toBe(T0 + 60_000);
    // "A server MUST NOT return null unless the client suggested ttlMs: null"; unwilling, it grants a finite one.
    expect((await subscriptions.subscribe(request({ url: url('/d'), ttlMs: null }))).refreshBefore).toBe(T0 + 600_000);
    const allowing = setUp({ allowNoExpiry: true });
    expect((await allowing.subscriptions.subscribe(request({ ttlMs: null }))).refreshBefore).toBeNull();
  });
});

describe('limits and verification', () => {
  it('refuses a subscription past the per-principal cap with ResourceExhausted naming the limit; another principal is not counted', async () => {
    const { subscriptions } = setUp({ maxSubscriptionsPerPrincipal: 2 });
    await subscriptions.subscribe(request({ arguments: { tool: 'a' } }));
    await subscriptions.subscribe(request({ arguments: { tool: 'b' } }));
    await expect(subscriptions.subscribe(request({ arguments: { tool: 'c' } }))).rejects.toMatchObject({
      code: 'RESOURCE_EXHAUSTED',
      data: { limit: 'subscriptions', max: 2 },
    });
    await subscriptions.subscribe(request({ ownerId: 'owner-b', arguments: { tool: 'c' } }));
    // A refresh of one it holds is no new subscription.
    await subscriptions.subscribe(request({ arguments: { tool: 'a' } }));
  });

  it('"Verification is cached per (principal, url)": other arguments to the same URL are not verified again; another principal is', async () => {
    const { subscriptions } = setUp();
    await subscriptions.subscribe(request({ arguments: { tool: 'a' } }));
    await subscriptions.subscribe(request({ arguments: { tool: 'b' } }));
    await subscriptions.subscribe(request({ ownerId: 'owner-b' }));
    expect(receiver().posts.filter((p) => p.body.includes('"verification"'))).toHaveLength(2);
  });

  it('an unreachable callback is CallbackEndpointError with a connection category, and nothing is stored', async () => {
    const { subscriptions, store } = setUp();
    const closed = await startWebhookReceiver();
    await closed.close();
    await expect(subscriptions.subscribe(request({ url: `${closed.origin}/gone` }))).rejects.toMatchObject({
      code: 'CALLBACK_FAILED',
      data: { reason: 'connection_refused' },
    });
    expect(await store.listByOwner('owner-a')).toEqual([]);
  });

  it('unsubscribe removes it; a second one, or one for another key, is NotFound', async () => {
    const { subscriptions, store } = setUp();
    await subscriptions.subscribe(request());
    await subscriptions.unsubscribe({ ownerId: 'owner-a', name: 'operation.finished', arguments: {}, url: url('/hook') });
    expect(await store.listByOwner('owner-a')).toEqual([]);
    await expect(subscriptions.unsubscribe({ ownerId: 'owner-a', name: 'operation.finished', arguments: {}, url: url('/hook') })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      data: { kind: 'subscription' },
    });
  });
});

describe('fan-out and delivery', () => {
  it("one job per live, matching subscription; an operation's end also ends its progress subscriptions with a terminated envelope", async () => {
    const { subscriptions, jobs, deliver, store, log } = setUp();
    const all = await subscriptions.subscribe(request({ url: url('/all') }));
    await subscriptions.subscribe(request({ url: url('/other'), arguments: { tool: 'export_dataset' } }));
    const progress = await subscriptions.subscribe(request({ url: url('/progress'), name: 'operation.progress', arguments: { operationId: 'op-1' } }));
    await subscriptions.subscribe(request({ ownerId: 'owner-b', url: url('/bob') }));
    await log.append(entry());
    await new WebhookFanOut(subscriptions.deps).fanOut(entry());
    expect(jobs).toEqual([
      { subscriptionId: all.id, ownerKey: 'owner-a', eventId: 'evt_1', attempt: 1 },
      { subscriptionId: progress.id, ownerKey: 'owner-a', attempt: 1 },
    ]);
    // The fan-out writes no subscription (status sync's role may not): the end job's delivery ends it.
    expect((await store.get('owner-a', progress.id))?.ending).toBeUndefined();
    expect(await deliver(jobs[0] as WebhookDeliveryJob)).toEqual({ kind: 'delivered' });
    const delivered = receiver().posts.find((p) => p.path === '/all' && !p.body.includes('verification'));
    expect(JSON.parse(delivered?.body ?? '{}')).toMatchObject({
      eventId: 'evt_1',
      name: 'operation.finished',
      data: { status: 'completed' },
      cursor: expect.any(String),
    });
    expect(await deliver(jobs[1] as WebhookDeliveryJob)).toEqual({ kind: 'delivered' });
    const terminated = receiver().posts.find((p) => p.path === '/progress' && p.body.includes('terminated'));
    expect(JSON.parse(terminated?.body ?? '{}')).toEqual({
      type: 'terminated',
      error: { code: -32023, message: 'The operation has ended', data: { reason: 'operation_ended' } },
    });
    expect(terminated?.headers.get('webhook-id')).toMatch(/^msg_terminated_/);
    expect(await store.get('owner-a', progress.id)).toBeUndefined();
  });

  it('a non-2xx answer is retried with exponential backoff, a bounded number of times; 410 and 413 are final', async () => {
    const { subscriptions, deliver, log } = setUp({ delivery: { baseDelaySeconds: 10, maxDelaySeconds: 25, maxAttempts: 4 } });
    const { id } = await subscriptions.subscribe(request());
    await log.append(entry());
    receiver().handle = async () => new Response(null, { status: 503 });
    const job = (attempt: number) => ({ subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_1', attempt });
    expect(await deliver(job(1))).toEqual({ kind: 'retry', afterSeconds: 10, reason: 'HTTP 503' });
    expect(await deliver(job(2))).toEqual({ kind: 'retry', afterSeconds: 20, reason: 'HTTP 503' });
    expect(await deliver(job(3))).toEqual({ kind: 'retry', afterSeconds: 25, reason: 'HTTP 503' });
    expect(await deliver(job(4))).toMatchObject({ kind: 'dropped' });
    for (const status of [410, 413]) {
      receiver().handle = async () => new Response(null, { status });
      expect(await deliver(job(1))).toMatchObject({ kind: 'dropped', reason: `the receiver answered HTTP ${status}` });
    }
  });

  it('records deliveryStatus, suspends after sustained failure, and a refresh reactivates it', async () => {
    const { subscriptions, deliver, log } = setUp({ suspension: { minAttempts: 3, failureRate: 0.5 } });
    const { id } = await subscriptions.subscribe(request());
    await log.append(entry());
    const job = { subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_1', attempt: 1 };
    receiver().handle = async () => new Response(null, { status: 500 });
    for (let i = 0; i < 3; i++) await deliver(job);
    expect(await deliver(job)).toEqual({ kind: 'dropped', reason: 'delivery is suspended' });
    const refreshed = await subscriptions.subscribe(request());
    expect(refreshed.deliveryStatus).toEqual({ active: false, lastDeliveryAt: null, lastError: 'http_5xx', failedSince: new Date(T0).toISOString() });
    receiver().handle = async () => new Response(null, { status: 204 });
    expect(await deliver(job)).toEqual({ kind: 'delivered' });
    expect((await subscriptions.subscribe(request())).deliveryStatus).toEqual({ active: true, lastDeliveryAt: new Date(T0).toISOString(), lastError: null });
  });

  it('drops a job whose subscription expired or is gone, or whose event is past retention', async () => {
    const { subscriptions, deliver, clock, log, jobs } = setUp();
    const { id } = await subscriptions.subscribe(request({ ttlMs: 5000 }));
    await log.append(entry());
    expect(await deliver({ subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_missing', attempt: 1 })).toEqual({
      kind: 'dropped',
      reason: 'the event is past retention',
    });
    expect(await deliver({ subscriptionId: 'sub_none', ownerKey: 'owner-a', eventId: 'evt_1', attempt: 1 })).toEqual({
      kind: 'dropped',
      reason: 'the subscription is gone',
    });
    clock.now = () => T0 + 6000;
    expect(await deliver({ subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_1', attempt: 1 })).toEqual({
      kind: 'dropped',
      reason: 'the subscription expired',
    });
    // An expired subscription gets no new jobs either.
    await new WebhookFanOut(subscriptions.deps).fanOut(entry({ eventId: 'evt_2' }));
    expect(jobs).toEqual([]);
  });

  it("the body's cursor is a watermark no later than where the subscription started or what retries may still deliver", async () => {
    const { subscriptions, store } = setUp();
    const { id, position } = await subscriptions.subscribe(request());
    const stored = await store.get('owner-a', id);
    expect(position).toBe(stored?.startPosition);
    expect(position <= timePosition(T0)).toBe(true);
  });
});
