/**
 * The fan-out finds every live subscription of an owner, however many expired ones are still
 * stored (issue 37: "Live subscriptions past the first 200 get nothing"): the DynamoDB store on
 * dynalite, listed through its owner index.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoDbWebhookSubscriptions } from '../../lambdas/aws/dynamodb-webhook-subscriptions.ts';
import type { EventEntry } from '../../lambdas/events/event-log.ts';
import { resolveEventsSettings } from '../../lambdas/events/events-settings.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { claimSlot } from '../../lambdas/events/subscription-slots.ts';
import type { WebhookDeliveryJob } from '../../lambdas/events/webhook-delivery-job.ts';
import { WebhookFanOut } from '../../lambdas/events/webhook-fan-out.ts';
import { WebhookSubscriptions } from '../../lambdas/events/webhook-subscriptions.ts';
import { createWebhookSender } from '../../lambdas/events/webhooks/webhook-sender.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';

const T0 = 1_760_000_000_000;
const MINUTE = 60_000;

let local: LocalDynamo;
beforeAll(async () => {
  local = await startLocalDynamo();
});
afterAll(async () => {
  await local?.close();
});

describe('webhook fan-out over many stored subscriptions', () => {
  it('a host that subscribes per operation, one every six minutes for a day, has each of its 240 finished events reach its live subscription', async () => {
    const tableName = 'many-subscriptions';
    await createOperationsTable(local.client, tableName);
    const store = new DynamoDbWebhookSubscriptions({ client: local.client, tableName });
    let now = T0;
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
    const fanOut = new WebhookFanOut(subscriptions.deps);
    const missed: number[] = [];
    for (let i = 0; i < 240; i++) {
      now = T0 + i * 6 * MINUTE;
      const id = `sub_${String(i).padStart(3, '0')}`;
      // A 30-minute grant: expired ones stay stored a day past it, as the TTL lets them. Its slot first, as a subscribe claims it.
      await claimSlot(store, { ownerId: 'owner-a', id, until: now + 30 * MINUTE, max: 100, nowMs: now });
      await store.save(
        {
          ownerId: 'owner-a',
          id,
          name: 'operation.finished',
          arguments: { operationId: `op-${i}` },
          url: 'https://hooks.example/a',
          secrets: ['v1.sealed'],
          createdAt: now,
          refreshedAt: now,
          refreshBefore: now + 30 * MINUTE,
          startPosition: '0',
          active: true,
          health: { windowStart: now, attempts: 0, failures: 0 },
          version: 1,
        },
        undefined,
      );
      now += 4 * MINUTE;
      jobs.length = 0;
      await fanOut.fanOut(finished(i, now));
      if (!jobs.some((job) => job.subscriptionId === id)) missed.push(i);
    }
    expect(missed).toEqual([]);
  });
});

function finished(i: number, at: number): EventEntry {
  return {
    ownerId: 'owner-a',
    eventId: `evt_${i}`,
    name: 'operation.finished',
    stream: 'operation.finished',
    operationId: `op-${i}`,
    tool: 'analyze_dataset',
    at,
    loggedAt: at,
    expiresAt: Math.ceil(at / 1000) + 86_400,
    data: { status: 'completed' },
  };
}
