import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConditionalCheckFailedException, DynamoDBClient, DynamoDBServiceException, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoDbActiveSlotStore } from '../../lambdas/aws/dynamodb-active-slot-store.ts';
import { DynamoDbRecordStore } from '../../lambdas/aws/dynamodb-record-store.ts';
import { RecordStoreError } from '../../lambdas/aws/record-store-error.ts';
import { KeyTooLongError } from '../../lambdas/aws/dynamodb-limits.ts';
import { RecordTooLargeError } from '../../lambdas/operations/ports.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { describeActiveSlotStoreContract, describeRecordStoreContract } from './record-store-contract.ts';

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

describeActiveSlotStoreContract('DynamoDB (dynalite), the slot half alone', async () => ({
  store: new DynamoDbActiveSlotStore({ client: local.client, tableName: (await freshStore()).tableName }),
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
  const reader = (tableName: string) => async (pk: string) =>
    (await local.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: pk } }, ConsistentRead: true }))).Item;

  it('writes the index attributes on operation items, and keeps request aliases on the slot item', async () => {
    const { store, tableName } = await freshStore();
    await store.create(record);
    await store.claimActiveSlot('owner-a', 'token-1', 5, { requestId: 'request-7', expiresAt: 1_760_003_600 });
    const read = reader(tableName);
    const operation = await read('OP#owner-a#token-1');
    expect(operation).toMatchObject({
      ownerKey: { S: 'OWNER#owner-a' },
      createdKey: { S: '001760000000000#token-1' },
      keepAliveSeconds: { NULL: true },
      createdAt: { N: '1760000000000' },
    });
    const slots = await read('ACTIVE#owner-a');
    expect(slots).toEqual({
      pk: { S: 'ACTIVE#owner-a' },
      tokens: { SS: ['token-1'] },
      'alias#request-7': { M: { token: { S: 'token-1' }, expiresAt: { N: '1760003600' } } },
      'ids#token-1': { S: '["request-7"]' },
    });
  });

  it('keeps the outcome as JSON text and writes no attribute for absent fields', async () => {
    const { store, tableName } = await freshStore();
    const outcome = { kind: 'result' as const, output: { z: 1, a: [null, ''], big: 1.7976931348623157e308 } };
    await store.create({ ...record, outcome, statusMessage: undefined });
    const item = await reader(tableName)('OP#owner-a#token-1');
    expect(item?.outcome).toEqual({ S: JSON.stringify(outcome) });
    expect(Object.keys(item ?? {}).sort()).toEqual([...Object.keys(record), 'outcome', 'pk', 'ownerKey', 'createdKey'].sort());
  });

  it('keeps active slots in one string set per owner, without index attributes, and removes the item once empty', async () => {
    const { store, tableName } = await freshStore();
    const read = reader(tableName);
    await store.claimActiveSlot('owner-a', 'token-1', 5);
    await store.claimActiveSlot('owner-a', 'token-2', 5);
    expect(await read('ACTIVE#owner-a')).toEqual({ pk: { S: 'ACTIVE#owner-a' }, tokens: { SS: ['token-1', 'token-2'] } });
    await store.releaseActiveSlot('owner-a', 'token-1');
    await store.releaseActiveSlot('owner-a', 'token-2');
    expect(await read('ACTIVE#owner-a')).toBeUndefined();
    // Releasing for an owner without an item must not create one.
    await store.releaseActiveSlot('owner-z', 'token-1');
    expect(await read('ACTIVE#owner-z')).toBeUndefined();
  });
});

describe('DynamoDbRecordStore limits that dynalite does not enforce like DynamoDB', () => {
  // dynalite measures strings in UTF-16 code units; DynamoDB in UTF-8 bytes. A plain client,
  // without the local stack's limits middleware, shows that the store enforces them itself.
  let plain: DynamoDBClient;
  beforeAll(() => {
    plain = new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  });
  afterAll(() => plain?.destroy());

  it('refuses a 2,050-byte partition key that dynalite itself accepts, without sending it', async () => {
    const { tableName } = await freshStore();
    const store = new DynamoDbRecordStore({ client: plain, tableName });
    const executionName = 'é'.repeat(1022);
    await plain.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: `EXEC#${executionName}` } } }));
    const send = vi.spyOn(plain, 'send');
    await expect(store.putExecutionPointer(executionName, { ownerId: 'owner-a', token: 't' }, 1)).rejects.toBeInstanceOf(KeyTooLongError);
    expect(send).not.toHaveBeenCalled();
  });

  it('refuses a record of 420,000 UTF-8 bytes that dynalite itself accepts', async () => {
    const { tableName } = await freshStore();
    const store = new DynamoDbRecordStore({ client: plain, tableName });
    await plain.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'raw' }, v: { S: '€'.repeat(140_000) } } }));
    const big = { ...record, outcome: { kind: 'result' as const, output: '€'.repeat(140_000) } };
    await expect(store.create(big)).rejects.toBeInstanceOf(RecordTooLargeError);
    expect(await store.get(big)).toBeUndefined();
  });

  it('refuses a transition whose UTF-8 outcome fits alone but not beside the ids already stored, which dynalite accepts', async () => {
    const { tableName } = await freshStore();
    const store = new DynamoDbRecordStore({ client: plain, tableName });
    // About 4 KB of ids stay in the item; the outcome brings 406,500 UTF-8 bytes in 135,500 characters.
    const stored = { ...record, token: 'k'.repeat(1000), requestId: 'r'.repeat(1000) };
    await store.create(stored);
    const outcome = { kind: 'result' as const, output: '€'.repeat(135_500) };
    await expect(store.transition(stored, ['working'], { status: 'completed', outcome })).rejects.toBeInstanceOf(RecordTooLargeError);
    expect(await store.get(stored)).toEqual(stored);
  });

  it("maps dynalite's own key size ValidationException to KeyTooLongError", async () => {
    const { store } = await freshStore();
    const fault = new DynamoDBServiceException({
      name: 'ValidationException',
      $fault: 'client',
      $metadata: {},
      message: 'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes',
    });
    vi.spyOn(local.client, 'send').mockRejectedValueOnce(fault as never);
    const error = await store.get(record).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KeyTooLongError);
    expect((error as Error).cause).toBe(fault);
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
      ['putRequestAlias', () => store.putRequestAlias('owner-a', 'r', { token: 'token-1', expiresAt: 1 })],
      ['findRequestAlias', () => store.findRequestAlias('owner-a', 'r')],
      ['deleteRequestAlias', () => store.deleteRequestAlias('owner-a', 'r')],
      ['claimActiveSlot', () => store.claimActiveSlot('owner-a', 'token-1', 5)],
      ['releaseActiveSlot', () => store.releaseActiveSlot('owner-a', 'token-1')],
      ['listActiveSlots', () => store.listActiveSlots('owner-a')],
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
    const stored = await local.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'OP#owner-a#token-1' } }, ConsistentRead: true }));
    const send = vi
      .spyOn(local.client, 'send')
      .mockRejectedValueOnce(new ConditionalCheckFailedException({ $metadata: {}, message: 'The conditional request failed', Item: stored.Item }) as never);
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
