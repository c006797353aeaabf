/** The webhook subscription store contract, against the in-memory store and the DynamoDB store on dynalite, and the DynamoDB item layout. */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbWebhookSubscriptions } from '../../lambdas/aws/dynamodb-webhook-subscriptions.ts';
import { InMemoryWebhookSubscriptions } from '../../lambdas/events/in-memory-webhook-subscriptions.ts';
import type { WebhookSubscription, WebhookSubscriptionStore } from '../../lambdas/events/webhook-subscription.ts';
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

async function freshTable(): Promise<string> {
  const tableName = `subscriptions-${++tables}`;
  await createOperationsTable(local.client, tableName);
  return tableName;
}

function subscription(overrides: Partial<WebhookSubscription> = {}): WebhookSubscription {
  return {
    ownerId: 'owner-a',
    id: 'sub_1',
    name: 'operation.finished',
    arguments: { operationId: 'op-1' },
    url: 'https://hooks.example/a?key=1',
    secrets: ['v1.sealed'],
    createdAt: T0,
    refreshedAt: T0,
    refreshBefore: T0 + 3_600_000,
    startPosition: '001760000000000#',
    active: true,
    health: { windowStart: T0, attempts: 0, failures: 0 },
    version: 1,
    ...overrides,
  };
}

function describeContract(name: string, make: () => Promise<WebhookSubscriptionStore>): void {
  describe(`WebhookSubscriptionStore contract: ${name}`, () => {
    let store: WebhookSubscriptionStore;
    beforeEach(async () => {
      store = await make();
    });

    it('saves a new subscription once, and reads it back exactly', async () => {
      expect(await store.save(subscription(), undefined)).toBe(true);
      expect(await store.save(subscription({ url: 'https://other.example/' }), undefined)).toBe(false);
      expect(await store.get('owner-a', 'sub_1')).toEqual(subscription());
    });

    it('writes over a subscription only at the version that was read (compare-and-set)', async () => {
      await store.save(subscription(), undefined);
      expect(await store.save(subscription({ active: false, version: 2 }), 1)).toBe(true);
      expect(await store.save(subscription({ url: 'https://late.example/', version: 2 }), 1)).toBe(false);
      expect(await store.get('owner-a', 'sub_1')).toMatchObject({ active: false, version: 2, url: 'https://hooks.example/a?key=1' });
    });

    it("lists an owner's subscriptions, and only theirs", async () => {
      await store.save(subscription(), undefined);
      await store.save(subscription({ id: 'sub_2', refreshBefore: null }), undefined);
      await store.save(subscription({ ownerId: 'owner-b' }), undefined);
      expect((await store.listByOwner('owner-a')).map((s) => s.id).sort()).toEqual(['sub_1', 'sub_2']);
      expect(await store.get('owner-b', 'sub_2')).toBeUndefined();
    });

    it('deletes at the version that was read, and not otherwise', async () => {
      await store.save(subscription(), undefined);
      expect(await store.delete('owner-a', 'sub_1', 7)).toBe(false);
      expect(await store.delete('owner-a', 'sub_1', 1)).toBe(true);
      expect(await store.get('owner-a', 'sub_1')).toBeUndefined();
      expect(await store.delete('owner-a', 'sub_1', 1)).toBe(false);
    });
  });
}

describeContract('in memory', async () => new InMemoryWebhookSubscriptions());
describeContract('DynamoDB (dynalite)', async () => new DynamoDbWebhookSubscriptions({ client: local.client, tableName: await freshTable() }));

describe('DynamoDbWebhookSubscriptions item layout', () => {
  it("keys a subscription by owner and id, lists it by owner through the index, and lets DynamoDB's TTL collect it a day past its grant", async () => {
    const tableName = await freshTable();
    await new DynamoDbWebhookSubscriptions({ client: local.client, tableName }).save(subscription(), undefined);
    const { Item } = await local.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'SUB#owner-a#sub_1' } }, ConsistentRead: true }));
    expect(Item).toMatchObject({
      ownerKey: { S: 'SUBS#owner-a' },
      createdKey: { S: 'sub_1' },
      version: { N: '1' },
      expiresAt: { N: String((T0 + 3_600_000) / 1000 + 86_400) },
    });
    await new DynamoDbWebhookSubscriptions({ client: local.client, tableName }).save(subscription({ id: 'sub_2', refreshBefore: null }), undefined);
    const { Item: forever } = await local.client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'SUB#owner-a#sub_2' } }, ConsistentRead: true }),
    );
    expect(forever?.expiresAt).toBeUndefined();
  });
});
