/**
 * The slot half of the webhook subscription store (the per-principal cap's counter), against
 * the in-memory store and the DynamoDB store on dynalite: compare-and-set on the slots'
 * version, one record per owner, and, on DynamoDB, an item that never shows in the owner's
 * listing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbWebhookSubscriptions } from '../../lambdas/aws/dynamodb-webhook-subscriptions.ts';
import { InMemoryWebhookSubscriptions } from '../../lambdas/events/in-memory-webhook-subscriptions.ts';
import type { WebhookSubscriptionStore } from '../../lambdas/events/webhook-subscription.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';

const T0 = 1_760_000_000_000;

let local: LocalDynamo;
let tables = 0;
beforeAll(async () => {
  local = await startLocalDynamo();
});
afterAll(async () => {
  await local?.close();
});

function describeSlots(name: string, make: () => Promise<WebhookSubscriptionStore>): void {
  describe(`subscription slots: ${name}`, () => {
    let store: WebhookSubscriptionStore;
    beforeEach(async () => {
      store = await make();
    });

    it('none are stored at first: no slot held, version 0', async () => {
      expect(await store.getSlots('owner-a')).toEqual({ held: {}, version: 0 });
    });

    it('writes the slots only at the version that was read, and reads them back exactly', async () => {
      expect(await store.saveSlots('owner-a', { held: { sub_1: T0 }, version: 1 }, 0)).toBe(true);
      expect(await store.saveSlots('owner-a', { held: { sub_2: null }, version: 1 }, 0)).toBe(false);
      expect(await store.saveSlots('owner-a', { held: { sub_1: T0, sub_2: null }, version: 2 }, 1)).toBe(true);
      expect(await store.saveSlots('owner-a', { held: {}, version: 2 }, 1)).toBe(false);
      expect(await store.getSlots('owner-a')).toEqual({ held: { sub_1: T0, sub_2: null }, version: 2 });
      expect(await store.getSlots('owner-b')).toEqual({ held: {}, version: 0 });
    });

    it("never shows in the owner's listing of subscriptions", async () => {
      await store.saveSlots('owner-a', { held: { sub_1: T0 }, version: 1 }, 0);
      expect(await store.listByOwner('owner-a')).toEqual([]);
    });
  });
}

describeSlots('in memory', async () => new InMemoryWebhookSubscriptions());
describeSlots('DynamoDB on dynalite', async () => {
  const tableName = `subscription-slots-${++tables}`;
  await createOperationsTable(local.client, tableName);
  return new DynamoDbWebhookSubscriptions({ client: local.client, tableName });
});
