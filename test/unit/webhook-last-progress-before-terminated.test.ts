/**
 * The last progress report before `terminated` (issue 47, scenario 5), over in-memory ports
 * with the real sender posting to a receiver on 127.0.0.1. docs/mcp-events.md promises that
 * the deliveries still pending go before `terminated`: that holds for a report whose try is
 * still in flight when the end is handled (a slow receiver, then a 503) and for one whose job
 * is still queued when the end job is received first, not only for retries already recorded.
 * The jobs are the fan-out's, and run as the transport runs them: each at its time, a retry
 * again after its delay.
 */
import { describe, expect, it } from 'vitest';
import { MAX_OWED } from '../../lambdas/events/owed-events.ts';
import type { WebhookDeliveryJob } from '../../lambdas/events/webhook-delivery-job.ts';
import { WebhookFanOut } from '../../lambdas/events/webhook-fan-out.ts';
import { deliveryMessageOf, parseDeliveryMessage } from '../../lambdas/events/webhooks/delivery-message.ts';
import { eventEntry, subscribeRequest, T0, webhookSetUp } from '../support/webhook-harness.ts';
import { webhookReceiverFixture } from '../support/webhook-receiver-fixture.ts';

const receiver = webhookReceiverFixture();

type SetUp = ReturnType<typeof webhookSetUp>;

/** Runs `jobs` as the queue would: in order of their time, each retry again after its delay, the clock set to each job's time. */
async function runAsTransport(setUp: SetUp, jobs: Array<{ job: WebhookDeliveryJob; at: number }>): Promise<void> {
  const queue = [...jobs];
  for (let runs = 0; queue.length > 0 && runs < 50; runs++) {
    queue.sort((a, b) => a.at - b.at);
    const next = queue.shift() as { job: WebhookDeliveryJob; at: number };
    setUp.clock.now = () => next.at;
    const outcome = await setUp.deliver(next.job);
    if (outcome.kind === 'retry') queue.push({ job: { ...next.job, attempt: next.job.attempt + 1 }, at: next.at + outcome.afterSeconds * 1000 });
  }
}

/** What the receiver was sent after verification, in the order it answered: [status, eventId or type]. */
function answered(): Array<[number, string]> {
  return receiver()
    .posts.filter((p) => !p.body.includes('"verification"'))
    .map((p) => {
      const body = JSON.parse(p.body) as { eventId?: string; type?: string };
      return [p.status, body.eventId ?? body.type ?? '?'];
    });
}

/** Whether the progress report reached the receiver with a 2xx before `terminated` did. */
function progressAcknowledgedBeforeTerminated(): boolean {
  const posts = answered();
  const acknowledged = posts.findIndex(([status, what]) => what === 'evt_progress' && status >= 200 && status <= 299);
  const terminated = posts.findIndex(([, what]) => what === 'terminated');
  return acknowledged >= 0 && terminated > acknowledged;
}

/** A progress subscription, its last report and its operation's end, each logged and fanned out: the jobs the queue holds. */
async function progressSubscription(setUp: SetUp) {
  const { id } = await setUp.subscriptions.subscribe(
    subscribeRequest(receiver(), { name: 'operation.progress', arguments: { operationId: 'op-1' }, url: `${receiver().origin}/progress` }),
  );
  const fanOut = new WebhookFanOut(setUp.subscriptions.deps);
  const progress = eventEntry({ eventId: 'evt_progress', name: 'operation.progress', data: { progress: 9, total: 10 } });
  const finished = eventEntry({ eventId: 'evt_finished' });
  for (const entry of [progress, finished]) {
    await setUp.log.append(entry);
    await fanOut.fanOut(entry);
  }
  const progressJob = setUp.jobs.find((job) => job.eventId === 'evt_progress');
  const endJob = setUp.jobs.find((job) => job.eventId === undefined);
  if (!progressJob || !endJob) throw new Error(`the fan-out enqueued ${JSON.stringify(setUp.jobs)}`);
  return { progressJob, endJob, id };
}

describe('an end job through the delivery queue', () => {
  it('keeps the ids it owes in its message, and a message owing more than an end job carries is not one of ours', () => {
    const job = { subscriptionId: 'sub_1', ownerKey: 'owner-a', owed: ['evt_a', 'evt_b'], attempt: 1 };
    expect(parseDeliveryMessage(deliveryMessageOf(job), 2)).toEqual({ ...job, attempt: 2 });
    const tooMany = { ...job, owed: Array.from({ length: MAX_OWED + 1 }, (_, i) => `evt_${i}`) };
    expect(parseDeliveryMessage(deliveryMessageOf(tooMany), 1)).toBeUndefined();
  });
});

describe('the last progress report before terminated', () => {
  it('a progress report still in flight when the end is handled (a slow receiver(), then a 503) reaches the receiver before terminated', async () => {
    const setUp = webhookSetUp();
    const { progressJob, endJob, id } = await progressSubscription(setUp);
    // The first try of the report hangs at the receiver until the end has been handled, then gets a 503.
    let arrived: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstTry = true;
    receiver().handle = async (request) => {
      const body = (await request.json()) as { type?: string; challenge?: string; eventId?: string };
      if (body.type === 'verification') return Response.json({ challenge: body.challenge });
      if (body.eventId === 'evt_progress' && firstTry) {
        firstTry = false;
        arrived();
        await released;
        return new Response(null, { status: 503 });
      }
      return new Response(null, { status: 204 });
    };
    const slowTry = setUp.deliver(progressJob);
    await inFlight;
    await runAsTransport(setUp, [{ job: endJob, at: T0 + 100 }]);
    release();
    const outcome = await slowTry;
    if (outcome.kind === 'retry') await runAsTransport(setUp, [{ job: { ...progressJob, attempt: 2 }, at: T0 + outcome.afterSeconds * 1000 }]);
    expect(answered().filter(([, what]) => what === 'terminated')).toHaveLength(1);
    expect(progressAcknowledgedBeforeTerminated(), JSON.stringify(answered())).toBe(true);
    expect(await setUp.store.get('owner-a', id)).toBeUndefined();
  });

  it('a progress report still queued when the end job is received first reaches the receiver before terminated', async () => {
    const setUp = webhookSetUp();
    const { progressJob, endJob, id } = await progressSubscription(setUp);
    await runAsTransport(setUp, [
      { job: endJob, at: T0 + 100 },
      { job: progressJob, at: T0 + 200 },
    ]);
    expect(answered().filter(([, what]) => what === 'terminated')).toHaveLength(1);
    expect(progressAcknowledgedBeforeTerminated(), JSON.stringify(answered())).toBe(true);
    expect(await setUp.store.get('owner-a', id)).toBeUndefined();
  });

  it('a report the end already delivered is not sent again by its own job: the record says it is settled', async () => {
    const setUp = webhookSetUp();
    const { progressJob } = await progressSubscription(setUp);
    expect(await setUp.deliver(progressJob)).toEqual({ kind: 'delivered' });
    // A redelivered copy of the same job (SQS delivers at least once) sends nothing more.
    expect(await setUp.deliver(progressJob)).toMatchObject({ kind: 'dropped' });
    expect(answered()).toEqual([[204, 'evt_progress']]);
  });
});
