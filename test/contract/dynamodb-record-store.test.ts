import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetItemCommand, ConditionalCheckFailedException, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoDbRecordStore, RecordStoreError } from '../../lambdas/aws/dynamodb-record-store.ts';
import { RecordTooLargeError } from '../../lambdas/operations/ports.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo-local.ts';
import { describeRecordStoreContract } from './record-store-contract.ts';

let local: LocalDynamo;
let tables = 0;

beforeAll(async () => {
  local = await startLocalDynamo();
});

afterAll(async () => {
  await local?.close();
});

/** A fresh table per test keeps tests independent without deleting anything. */
async function freshStore(): Promise<{ store: DynamoDbRecordStore; tableName: string }> {
  const tableName = `operations-${++tables}`;
  await createOperationsTable(local.client, tableName);
  return { store: new DynamoDbRecordStore({ client: local.client, tableName }), tableName };
}

describeRecordStoreContract('DynamoDB (dynalite)', async () => ({
  store: (await freshStore()).store,
  cleanup: async () => {},
}));

const record: OperationRecord = {
  ownerId: 'owner-a',
  token: 'token-1',
  tool: 'slow-echo',
  argumentsHash: 'h',
  dialect: 'tasks-2026-07-28',
  status: 'working',
  executionName: 'exec-token-1',
  createdAt: 1_760_000_000_000,
  updatedAt: 1_760_000_000_000,
  keepAliveSeconds: null,
  pollIntervalSeconds: 5,
};

describe('DynamoDbRecordStore item layout', () => {
  it('writes the index attributes on operation items and not on alias items', async () => {
    const { store, tableName } = await freshStore();
    await store.create(record);
    await store.putRequestAlias('owner-a', 'request-7', 'token-1', 1_760_003_600);
    const read = async (pk: string) =>
      (await local.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: pk } }, ConsistentRead: true }))).Item;
    const operation = await read('OP#owner-a#token-1');
    expect(operation).toMatchObject({
      ownerKey: { S: 'OWNER#owner-a' },
      createdKey: { S: '001760000000000#token-1' },
      keepAliveSeconds: { NULL: true },
      createdAt: { N: '1760000000000' },
    });
    const alias = await read('REQ#owner-a#request-7');
    expect(alias).toEqual({ pk: { S: 'REQ#owner-a#request-7' }, token: { S: 'token-1' }, expiresAt: { N: '1760003600' } });
  });
});

describe('DynamoDbRecordStore fault handling', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const throttled = () =>
    new DynamoDBServiceException({ name: 'ProvisionedThroughputExceededException', $fault: 'client', $metadata: {}, message: 'slow down' });

  it('wraps a non-conditional failure of every method in RecordStoreError with the SDK error as cause', async () => {
    const { store } = await freshStore();
    await store.create(record);
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['create', () => store.create({ ...record, token: 'token-2' })],
      ['get', () => store.get(record)],
      ['transition', () => store.transition(record, ['working'], { status: 'completed' })],
      ['listByOwner', () => store.listByOwner('owner-a', { limit: 5 })],
      ['putRequestAlias', () => store.putRequestAlias('owner-a', 'r', 'token-1', 1)],
      ['findTokenByRequestId', () => store.findTokenByRequestId('owner-a', 'r')],
    ];
    for (const [method, call] of calls) {
      const fault = throttled();
      vi.spyOn(local.client, 'send').mockRejectedValueOnce(fault as never);
      const error = await call().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, method).toBeInstanceOf(RecordStoreError);
      expect((error as Error).cause, method).toBe(fault);
      vi.restoreAllMocks();
    }
    // The record is untouched: a failed transition is not reported as "condition failed".
    expect(await store.get(record)).toEqual(record);
  });

  it('maps the item size ValidationException to RecordTooLargeError', async () => {
    const { store } = await freshStore();
    const fault = new DynamoDBServiceException({
      name: 'ValidationException',
      $fault: 'client',
      $metadata: {},
      message: 'Item size has exceeded the maximum allowed size',
    });
    vi.spyOn(local.client, 'send').mockRejectedValueOnce(fault as never);
    const error = await store.create(record).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RecordTooLargeError);
    expect((error as Error).cause).toBe(fault);
  });

  it('takes the existing record from ALL_OLD when the service returns it, without another read', async () => {
    const { store, tableName } = await freshStore();
    await store.create(record);
    const stored = await local.client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'OP#owner-a#token-1' } }, ConsistentRead: true }),
    );
    const send = vi.spyOn(local.client, 'send').mockRejectedValueOnce(
      new ConditionalCheckFailedException({ $metadata: {}, message: 'The conditional request failed', Item: stored.Item }) as never,
    );
    expect(await store.create({ ...record, tool: 'other' })).toEqual({ created: false, existing: record });
    expect(send).toHaveBeenCalledTimes(1);
  });
});

describe('startLocalDynamo', () => {
  it('persists under a data directory and starts again on the same table', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'dynalite-'));
    try {
      const first = await startLocalDynamo({ dataDir });
      expect(first.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await new DynamoDbRecordStore({ client: first.client, tableName: first.tableName }).create(record);
      await first.close();
      await first.close();

      const second = await startLocalDynamo({ dataDir });
      try {
        const store = new DynamoDbRecordStore({ client: second.client, tableName: second.tableName });
        expect(await store.get(record)).toEqual(record);
        await createOperationsTable(second.client, second.tableName);
        expect((await store.listByOwner('owner-a', { limit: 5 })).items).toEqual([record]);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
