/**
 * The local TTL sweeper on dynalite, through the real DynamoDBClient: expired items stay
 * for the configured lag, as DynamoDB's lazy TTL leaves them, then go; nothing else goes.
 */
import { DynamoDBClient, GetItemCommand, PutItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { startTtlSweeper, type TtlSweeper } from '../../local/dynamodb/dynamo-ttl-sweeper.ts';

let dynamo: LocalDynamo;
let sweeper: TtlSweeper | undefined;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
});

afterEach(async () => {
  await sweeper?.close();
  sweeper = undefined;
});

afterAll(async () => {
  await dynamo?.close();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function put(pk: string, expiresAt: { N: string } | { S: string } | undefined): Promise<void> {
  await dynamo.client.send(new PutItemCommand({ TableName: dynamo.tableName, Item: { pk: { S: pk }, ...(expiresAt ? { expiresAt } : {}) } }));
}

async function exists(pk: string): Promise<boolean> {
  const { Item } = await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tableName, Key: { pk: { S: pk } }, ConsistentRead: true }));
  return Item !== undefined;
}

describe('local TTL sweeper', () => {
  it('an expired item is still there before the lag has passed, and gone after it', async () => {
    await put('expired', { N: String(nowSeconds() - 1) });
    sweeper = startTtlSweeper({ client: dynamo.client, tableName: dynamo.tableName, lagSeconds: 2, intervalMs: 100, logger: { warn: () => {} } });
    expect(await sweeper.sweep()).toBe(0);
    expect(await exists('expired')).toBe(true);
    await expect.poll(() => exists('expired'), { timeout: 5000, interval: 100 }).toBe(false);
  });

  it('never deletes an item that has not expired, has no Number TTL, or expired more than five years ago (as DynamoDB TTL)', async () => {
    await put('future', { N: String(nowSeconds() + 3600) });
    await put('no-ttl', undefined);
    await put('string-ttl', { S: String(nowSeconds() - 3600) });
    await put('ancient', { N: String(nowSeconds() - 6 * 365 * 24 * 3600) });
    await put('due', { N: String(nowSeconds() - 3600) });
    sweeper = startTtlSweeper({ client: dynamo.client, tableName: dynamo.tableName, lagSeconds: 0, intervalMs: 60_000 });
    expect(await sweeper.sweep()).toBe(1);
    expect(await exists('due')).toBe(false);
    for (const pk of ['future', 'no-ttl', 'string-ttl', 'ancient']) expect(await exists(pk), pk).toBe(true);
  });

  it('keeps an item refreshed between its scan and its delete: the delete is conditional on it still being expired', async () => {
    await put('refreshed', { N: String(nowSeconds() - 3600) });
    // Refresh the item once the sweeper's scan has seen it, before the sweeper deletes it. A
    // client of its own: the stack's client resolves each command's middleware once, on first use.
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'ScanCommand') {
          await dynamo.client.send(
            new UpdateItemCommand({
              TableName: dynamo.tableName,
              Key: { pk: { S: 'refreshed' } },
              UpdateExpression: 'SET expiresAt = :later',
              ExpressionAttributeValues: { ':later': { N: String(nowSeconds() + 3600) } },
            }),
          );
        }
        return result;
      },
      { step: 'initialize', name: 'refreshAfterScan' },
    );
    try {
      sweeper = startTtlSweeper({ client, tableName: dynamo.tableName, lagSeconds: 0, intervalMs: 60_000 });
      expect(await sweeper.sweep()).toBe(0);
      expect(await exists('refreshed')).toBe(true);
    } finally {
      client.destroy();
    }
  });

  it('sweeps every page of a scan', async () => {
    const expired = String(nowSeconds() - 3600);
    // About 1.3 MB of items: more than one 1 MB scan page.
    for (let i = 0; i < 13; i++) {
      await dynamo.client.send(
        new PutItemCommand({ TableName: dynamo.tableName, Item: { pk: { S: `page-${i}` }, expiresAt: { N: expired }, data: { S: 'd'.repeat(100_000) } } }),
      );
    }
    const firstPage = await dynamo.client.send(new ScanCommand({ TableName: dynamo.tableName }));
    expect(firstPage.LastEvaluatedKey).toBeDefined();
    sweeper = startTtlSweeper({ client: dynamo.client, tableName: dynamo.tableName, lagSeconds: 0, intervalMs: 60_000 });
    expect(await sweeper.sweep()).toBe(13);
  });
});
