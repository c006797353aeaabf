/**
 * The fan-out of a principal that subscribes to nothing (issue 40: "the fan-out runs one
 * owner-index Query per appended occurrence even with no subscriptions"): it reads the owner's
 * subscription slots and lists nothing, so its cost does not grow with the subscriptions still
 * stored; a principal with a live subscription is still listed and reached.
 */
import { describe, expect, it, vi } from 'vitest';
import type { EventEntry } from '../../lambdas/events/event-log.ts';
import { resolveEventsSettings } from '../../lambdas/events/events-settings.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { InMemoryWebhookSubscriptions } from '../../lambdas/events/in-memory-webhook-subscriptions.ts';
import { claimSlot } from '../../lambdas/events/subscription-slots.ts';
import type { WebhookDeliveryJob } from '../../lambdas/events/webhook-delivery-job.ts';
import { WebhookFanOut } from '../../lambdas/events/webhook-fan-out.ts';
import type { WebhookSubscription } from '../../lambdas/events/webhook-subscription.ts';
import { WebhookSubscriptions } from '../../lambdas/events/webhook-subscriptions.ts';
import { createWebhookSender } from '../../lambdas/events/webhooks/webhook-sender.ts';

const T0 = 1_760_000_000_000;
const MINUTE = 60_000;

function setUp() {
  let now = T0;
  const store = new InMemoryWebhookSubscriptions();
  const listed = vi.spyOn(store, 'listByOwner');
  const jobs: WebhookDeliveryJob[] = [];
  const subscriptions = new WebhookSubscriptions({
    store,
    log: new InMemoryEventLog(),
    send: createWebhookSender({ mode: 'local' }),
    queue: { enqueue: async (added) => void jobs.push(...added) },
    settings: resolveEventsSettings({}),
    secretKey: async () => new Uint8Array(32).fill(9),
    clock: { now: () => now },
    logger: { error: vi.fn(), warn: vi.fn() },
  });
  return { store, listed, jobs, fanOut: new WebhookFanOut(subscriptions.deps), setNow: (at: number) => (now = at) };
}

function subscription(id: string, refreshBefore: number | null): WebhookSubscription {
  return {
    ownerId: 'owner-a',
    id,
    name: 'operation.finished',
    arguments: {},
    url: 'https://hooks.example/a',
    secrets: ['v1.sealed'],
    createdAt: T0,
    refreshedAt: T0,
    refreshBefore,
    startPosition: '0',
    active: true,
    health: { windowStart: T0, attempts: 0, failures: 0 },
    version: 1,
  };
}

/** As a subscribe writes one: its slot first, then the subscription. */
async function subscribed(store: InMemoryWebhookSubscriptions, id: string, refreshBefore: number | null): Promise<void> {
  await claimSlot(store, { ownerId: 'owner-a', id, until: refreshBefore, max: 100, nowMs: T0 });
  await store.save(subscription(id, refreshBefore), undefined);
}

function finished(i: number): EventEntry {
  return {
    ownerId: 'owner-a',
    eventId: `evt_${i}`,
    name: 'operation.finished',
    stream: 'operation.finished',
    operationId: `op-${i}`,
    tool: 'analyze_dataset',
    at: T0,
    loggedAt: T0,
    expiresAt: Math.ceil(T0 / 1000) + 86_400,
    data: { status: 'completed' },
  };
}

describe('webhook fan-out of a principal with no live subscription', () => {
  it('a thousand ends of a principal that never subscribed list no subscription and enqueue nothing', async () => {
    const { listed, jobs, fanOut } = setUp();
    for (let i = 0; i < 1000; i++) expect(await fanOut.fanOut(finished(i))).toBe(0);
    expect(listed).not.toHaveBeenCalled();
    expect(jobs).toEqual([]);
  });

  it('a principal whose subscriptions all lapsed (still stored, as DynamoDB keeps them a day) is not listed', async () => {
    const { store, listed, jobs, fanOut, setNow } = setUp();
    for (let i = 0; i < 50; i++) await subscribed(store, `sub_${i}`, T0 + 30 * MINUTE);
    setNow(T0 + 31 * MINUTE);
    expect(await fanOut.fanOut(finished(1))).toBe(0);
    expect(listed).not.toHaveBeenCalled();
    expect(jobs).toEqual([]);
  });

  it('a principal with one live subscription among lapsed ones is listed, and its subscription gets the job', async () => {
    const { store, listed, jobs, fanOut, setNow } = setUp();
    await subscribed(store, 'sub_old', T0 + 30 * MINUTE);
    await subscribed(store, 'sub_live', null);
    setNow(T0 + 31 * MINUTE);
    expect(await fanOut.fanOut(finished(1))).toBe(1);
    expect(listed).toHaveBeenCalledTimes(1);
    expect(jobs).toEqual([{ subscriptionId: 'sub_live', ownerKey: 'owner-a', eventId: 'evt_1', attempt: 1 }]);
  });
});
