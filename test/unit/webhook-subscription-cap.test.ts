/**
 * The per-principal cap on webhook subscriptions under concurrency, on dynalite: the cap is a
 * conditional counter (the owner's slots), claimed before the verification POST, so parallel
 * subscribes cannot all pass a check made before any of them was written.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbWebhookSubscriptions } from '../../lambdas/aws/dynamodb-webhook-subscriptions.ts';
import { isLive } from '../../lambdas/events/webhook-subscription.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { answerVerifications, subscribeRequest, T0, webhookSetUp } from '../support/webhook-harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

let local: LocalDynamo;
let receiver: WebhookReceiver;
let tables = 0;
beforeAll(async () => {
  [local, receiver] = await Promise.all([startLocalDynamo(), startWebhookReceiver()]);
});
afterAll(async () => {
  await Promise.all([local?.close(), receiver?.close()]);
});
beforeEach(() => {
  receiver.posts.length = 0;
  answerVerifications(receiver);
});

async function dynamoStore(): Promise<DynamoDbWebhookSubscriptions> {
  const tableName = `subscription-cap-${++tables}`;
  await createOperationsTable(local.client, tableName);
  return new DynamoDbWebhookSubscriptions({ client: local.client, tableName });
}

describe('the 25-subscription cap under parallel subscribes', () => {
  it('60 parallel subscribes of distinct URLs leave at most the cap live; the rest get RESOURCE_EXHAUSTED', async () => {
    const { subscriptions, store } = webhookSetUp({ store: await dynamoStore() });
    const max = subscriptions.deps.settings.maxSubscriptionsPerPrincipal;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) => subscriptions.subscribe(subscribeRequest(receiver, { url: `${receiver.origin}/hook-${i}` }))),
    );
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    for (const reason of refused) expect(reason).toMatchObject({ code: 'RESOURCE_EXHAUSTED', data: { limit: 'subscriptions', max } });
    const live = (await store.listByOwner('owner-a')).filter((s) => isLive(s, T0));
    expect(live.length).toBeLessThanOrEqual(max);
    expect(outcomes.length - refused.length).toBe(live.length);
    expect(live.length).toBeGreaterThan(0);
  });

  it('unsubscribing frees a slot for another subscription, and the slots never show in the listing', async () => {
    const { subscriptions, store } = webhookSetUp({ store: await dynamoStore(), settings: { maxSubscriptionsPerPrincipal: 2 } });
    await subscriptions.subscribe(subscribeRequest(receiver, { url: `${receiver.origin}/a` }));
    await subscriptions.subscribe(subscribeRequest(receiver, { url: `${receiver.origin}/b` }));
    await expect(subscriptions.subscribe(subscribeRequest(receiver, { url: `${receiver.origin}/c` }))).rejects.toMatchObject({ code: 'RESOURCE_EXHAUSTED' });
    await subscriptions.unsubscribe({ ownerId: 'owner-a', name: 'operation.finished', arguments: {}, url: `${receiver.origin}/a` });
    await subscriptions.subscribe(subscribeRequest(receiver, { url: `${receiver.origin}/c` }));
    expect((await store.listByOwner('owner-a')).map((s) => s.url).sort()).toEqual([`${receiver.origin}/b`, `${receiver.origin}/c`]);
  });

  it('a lapsed subscription frees its slot, and a failed verification gives its slot back', async () => {
    const { subscriptions, clock } = webhookSetUp({ store: await dynamoStore(), settings: { maxSubscriptionsPerPrincipal: 1 } });
    await subscriptions.subscribe(subscribeRequest(receiver, { url: `${receiver.origin}/a`, ttlMs: 5000 }));
    clock.now = () => T0 + 6000;
    receiver.handle = async () => new Response(null, { status: 500 });
    await expect(subscriptions.subscribe(subscribeRequest(receiver, { url: `${receiver.origin}/b` }))).rejects.toMatchObject({ code: 'CALLBACK_FAILED' });
    answerVerifications(receiver);
    await subscriptions.subscribe(subscribeRequest(receiver, { url: `${receiver.origin}/c` }));
  });
});
