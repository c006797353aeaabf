/**
 * Subscribing after the fact, over in-memory ports with the real sender posting to a receiver
 * on 127.0.0.1: a subscription replays from its start position (the position its answer's
 * cursor names), so what lies between it and now is enqueued at subscribe time, also with
 * `cursor: null`; and a progress subscription whose operation has already ended gets its
 * `terminated` at once, after the progress still in the log.
 */
import { describe, expect, it } from 'vitest';
import { positionOf, timePosition } from '../../lambdas/events/event-log.ts';
import { eventEntry, OPERATION_ENDED, subscribeRequest, T0, webhookSetUp } from '../support/webhook-harness.ts';
import { webhookReceiverFixture } from '../support/webhook-receiver-fixture.ts';

const receiver = webhookReceiverFixture();

const deliveredBodies = () =>
  receiver()
    .posts.filter((p) => !p.body.includes('"verification"'))
    .map((p) => JSON.parse(p.body) as Record<string, unknown>);

describe('a webhook subscribed after the events it asks for', () => {
  it('a webhook subscribed to operation.finished with cursor null just after the operation ended still gets that end', async () => {
    const { subscriptions, jobs, log, deliver } = webhookSetUp();
    // The task ends; its operation.finished is logged a moment before the host subscribes (the ChatGPT flow).
    const end = eventEntry({ loggedAt: T0 - 300 });
    await log.append(end);
    const { id, position } = await subscriptions.subscribe(subscribeRequest(receiver(), { arguments: { operationId: 'op-1' }, cursor: null }));
    // The answer's cursor lies before the end: a poll from it returns the end, and so does the webhook.
    expect(position < positionOf(end)).toBe(true);
    expect(jobs).toEqual([{ subscriptionId: id, ownerKey: 'owner-a', eventId: end.eventId, attempt: 1 }]);
    for (const job of jobs) expect(await deliver(job)).toEqual({ kind: 'delivered' });
    expect(deliveredBodies()).toEqual([expect.objectContaining({ eventId: end.eventId, name: 'operation.finished' })]);
  });

  it('a cursor from before the end replays it, though it was logged within the settle window', async () => {
    const { subscriptions, jobs, log } = webhookSetUp();
    await log.append(eventEntry({ loggedAt: T0 - 300 }));
    await subscriptions.subscribe(subscribeRequest(receiver(), { cursor: timePosition(T0 - 60_000) }));
    expect(jobs.map((job) => job.eventId)).toEqual(['evt_1']);
  });

  it('a cursor null does not replay what was logged before the settled horizon', async () => {
    const { subscriptions, jobs, log, subscriptions: s } = webhookSetUp();
    await log.append(eventEntry({ loggedAt: T0 - s.deps.settings.settleMs - 1 }));
    await subscriptions.subscribe(subscribeRequest(receiver(), { cursor: null }));
    expect(jobs).toEqual([]);
  });

  it('a progress subscription whose operation has already ended gets its terminated at once, after the progress still in the log', async () => {
    const { subscriptions, jobs, log, deliver, store } = webhookSetUp();
    await log.append(eventEntry({ eventId: 'evt_progress', name: 'operation.progress', loggedAt: T0 - 5000, data: { progress: 10, total: 10 } }));
    const { id } = await subscriptions.subscribe(
      subscribeRequest(receiver(), {
        name: 'operation.progress',
        arguments: { operationId: 'op-1' },
        cursor: timePosition(T0 - 60_000),
        operationEnded: true,
      }),
    );
    expect(jobs).toEqual([
      { subscriptionId: id, ownerKey: 'owner-a', eventId: 'evt_progress', attempt: 1 },
      { subscriptionId: id, ownerKey: 'owner-a', attempt: 1 },
    ]);
    // Whichever job runs first, terminated comes after the replayed progress.
    const [progressJob, endJob] = jobs as [(typeof jobs)[0], (typeof jobs)[0]];
    expect(await deliver(endJob)).toMatchObject({ kind: 'retry' });
    expect(await deliver(progressJob)).toEqual({ kind: 'delivered' });
    expect(await deliver({ ...endJob, attempt: 2 })).toEqual({ kind: 'delivered' });
    expect(deliveredBodies()).toEqual([expect.objectContaining({ eventId: 'evt_progress' }), { type: 'terminated', error: OPERATION_ENDED }]);
    expect(await store.get('owner-a', id)).toBeUndefined();
  });
});
