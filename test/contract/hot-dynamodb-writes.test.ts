/**
 * A start's writes over the hot wire (lambdas/aws/hot-dynamodb-writes.ts): against dynalite
 * they answer what the SDK path answers, the store built on them behaves as the plain one,
 * and against a scripted endpoint every answer but the plain success reaches the caller as
 * the SDK's own (a failed condition with its Item, a throttle retried with the SDK's backoff),
 * without a write ever being sent twice where the service did it.
 */
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type PutItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AWS_CLIENT_CONFIG } from '../../lambdas/aws/aws-client-config.ts';
import { countAwsCalls } from '../../lambdas/aws/aws-call-counter.ts';
import { DynamoDbRecordStore } from '../../lambdas/aws/dynamodb-record-store.ts';
import { MAX_MISSES_IN_A_ROW } from '../../lambdas/aws/hot-call.ts';
import { HotDynamoDbWrites } from '../../lambdas/aws/hot-dynamodb-writes.ts';
import { PK } from '../../lambdas/aws/operation-item.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { lazyDynamoDbClient } from '../../lambdas/aws/lazy-dynamodb-client.ts';
import { lazyDynamoDbRecordStore } from '../../lambdas/aws/lazy-dynamodb-record-store.ts';
import { HotGetItem } from '../../lambdas/aws/hot-get-item.ts';
import { describeRecordStoreContract } from './record-store-contract.ts';
import { fullRecord, makeRecord } from './record-store-fixtures.ts';
import { fromSdk, scriptedServer, type Answer, type Recorded } from './hot-scripted-server.ts';

const CREDENTIALS = { accessKeyId: 'AKIDHOTWRITE', secretAccessKey: 'hot-write-secret' };

let local: LocalDynamo;
let tables = 0;

beforeAll(async () => {
  local = await startLocalDynamo();
});

afterAll(async () => {
  await local?.close();
});

/** A client of its own per test: middleware added to it before its first call takes effect (`cacheMiddleware`). */
function clientFor(endpoint: string, extra: { maxAttempts?: number } = {}): DynamoDBClient {
  return new DynamoDBClient({ ...AWS_CLIENT_CONFIG, endpoint, region: 'us-east-1', credentials: CREDENTIALS, ...extra });
}

/** Counts the writes that go through the client's middleware stack, i.e. the SDK path only. */
function sdkPathWrites(client: DynamoDBClient): { count: () => number } {
  let count = 0;
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'PutItemCommand' || context.commandName === 'UpdateItemCommand') count++;
      return next(args);
    },
    { step: 'initialize', name: 'sdkPathWrites' },
  );
  return { count: () => count };
}

async function freshTable(): Promise<string> {
  const tableName = `hot-writes-${++tables}`;
  await createOperationsTable(local.client, tableName);
  return tableName;
}

const ITEM = { [PK]: { S: 'OP#owner-1#token-1' }, status: { S: 'working' }, n: { N: '7' }, tags: { SS: ['a', 'b'] } };
const CONDITION_FAILED = (item?: Record<string, unknown>): Answer => ({
  status: 400,
  body: {
    __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
    message: 'The conditional request failed',
    ...(item ? { Item: item } : {}),
  },
});
const THROTTLED: Answer = {
  status: 400,
  body: { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'Rate of requests exceeds the allowed throughput' },
};
const put = (tableName: string, item = ITEM): PutItemCommandInput => ({
  TableName: tableName,
  Item: item,
  ConditionExpression: 'attribute_not_exists(#pk)',
  ExpressionAttributeNames: { '#pk': PK },
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
});

// The whole store contract, a start's writes sent over the hot wire of a client of its own
// (the local stack's client checks DynamoDB's size limits in its middleware, which the hot path skips).
describeRecordStoreContract("DynamoDB (dynalite), a start's writes over the hot wire", async () => {
  const tableName = await freshTable();
  const client = clientFor(local.endpoint);
  return {
    store: new DynamoDbRecordStore({ client, tableName, operationReads: new HotGetItem(client), writes: new HotDynamoDbWrites(client) }),
    cleanup: async () => client.destroy(),
  };
});

describe('the hot writes against dynalite', () => {
  it("the MCP function's store sends a start's writes over the hot wire once it loads the client", async () => {
    const tableName = await freshTable();
    const client = lazyDynamoDbClient({ ...AWS_CLIENT_CONFIG, endpoint: local.endpoint, region: 'us-east-1', credentials: CREDENTIALS });
    const built = await client.get();
    const stack = sdkPathWrites(built);
    const counter = countAwsCalls(built);
    const store = lazyDynamoDbRecordStore({ client, tableName, operationReads: new HotGetItem(client) });
    const record = makeRecord({ token: 'token-lazy' });
    expect(await store.create(record)).toEqual({ created: true, record });
    expect(await store.claimActiveSlot(record.ownerId, record.token, 3)).toBe('claimed');
    expect(stack.count()).toBe(0);
    expect(counter.snapshot()).toEqual({ PutItem: 1, UpdateItem: 1 });
    expect(await new DynamoDbRecordStore({ client: local.client, tableName }).get(record)).toEqual(record);
    built.destroy();
  });

  it('a conditional PutItem and UpdateItem answer what the SDK path answers, as one call each, without the middleware stack', async () => {
    const tableName = await freshTable();
    const client = clientFor(local.endpoint);
    const stack = sdkPathWrites(client);
    const counter = countAwsCalls(client);
    const writes = new HotDynamoDbWrites(client);

    expect(await writes.putItem(put(tableName))).toEqual({});
    const update = {
      TableName: tableName,
      Key: { [PK]: ITEM[PK] },
      UpdateExpression: 'SET #status = :to ADD #tags :more',
      ConditionExpression: '#status = :from',
      ExpressionAttributeNames: { '#status': 'status', '#tags': 'tags' },
      ExpressionAttributeValues: { ':to': { S: 'completed' }, ':from': { S: 'working' }, ':more': { SS: ['c'] } },
      ReturnValues: 'ALL_NEW' as const,
    };
    const viaHot = await writes.updateItem(update);
    expect(stack.count()).toBe(0);
    expect(counter.snapshot()).toEqual({ PutItem: 1, UpdateItem: 1 });
    expect(counter.attempts()).toEqual({ PutItem: 1, UpdateItem: 1 });

    // The same writes by the SDK on a second item: the same answers.
    const other = { ...ITEM, [PK]: { S: 'OP#owner-1#token-2' } };
    expect((await client.send(new PutItemCommand(put(tableName, other)))).Attributes).toBeUndefined();
    const viaSdk = await client.send(new UpdateItemCommand({ ...update, Key: { [PK]: other[PK] } }));
    expect({ ...viaHot.Attributes, [PK]: other[PK] }).toEqual(viaSdk.Attributes);
    expect(viaHot.Attributes).toEqual({ ...ITEM, status: { S: 'completed' }, tags: { SS: ['a', 'b', 'c'] } });
    client.destroy();
  });

  it("a failed condition is the SDK's ConditionalCheckFailedException, from the hot answer, with nothing sent again", async () => {
    const tableName = await freshTable();
    const client = clientFor(local.endpoint);
    const stack = sdkPathWrites(client);
    const counter = countAwsCalls(client);
    const writes = new HotDynamoDbWrites(client);
    await writes.putItem(put(tableName));

    const viaHot = await writes.putItem(put(tableName)).catch((caught: unknown) => caught);
    const viaSdk = await client.send(new PutItemCommand(put(tableName))).catch((caught: unknown) => caught);
    expect(viaHot).toBeInstanceOf(ConditionalCheckFailedException);
    expect((viaHot as Error).message).toBe((viaSdk as Error).message);
    expect((viaHot as ConditionalCheckFailedException).Item).toEqual((viaSdk as ConditionalCheckFailedException).Item);
    // The SDK deserialized the hot answer as its first attempt: one attempt on the wire for each failed put.
    expect(counter.snapshot()).toEqual({ PutItem: 3 });
    expect(counter.attempts()).toEqual({ PutItem: 3 });
    expect(stack.count()).toBe(2);
    client.destroy();
  });

  it('the record store on the hot writes creates, refuses a second create and claims slots as the plain store does', async () => {
    const tableName = await freshTable();
    const client = clientFor(local.endpoint);
    const stack = sdkPathWrites(client);
    const hot = new DynamoDbRecordStore({ client, tableName, writes: new HotDynamoDbWrites(client) });
    const plain = new DynamoDbRecordStore({ client: local.client, tableName });
    const record = fullRecord({ token: 'token-hot' });

    expect(await hot.create(record)).toEqual({ created: true, record });
    expect(await hot.create({ ...record, tool: 'another' })).toEqual({ created: false, existing: record });
    expect(await plain.create({ ...record, tool: 'another' })).toEqual({ created: false, existing: record });

    const owner = 'owner-slots';
    expect(await hot.claimActiveSlot(owner, 't1', 2)).toBe('claimed');
    expect(await hot.claimActiveSlot(owner, 't1', 2)).toBe('already-held');
    expect(await hot.claimActiveSlot(owner, 't2', 2, { requestId: 'r2', expiresAt: 1_900_000_000 })).toBe('claimed');
    expect(await hot.claimActiveSlot(owner, 't3', 2)).toBe('refused');
    expect(await plain.claimActiveSlot(owner, 't3', 2)).toBe('refused');
    expect((await plain.listActiveSlots(owner)).sort()).toEqual(['t1', 't2']);
    expect(await plain.findRequestAlias(owner, 'r2')).toEqual({ token: 't2', expiresAt: 1_900_000_000 });
    // Only the refused condition's answers went through the stack (deserialized from the hot answer): one create, two claims.
    expect(stack.count()).toBe(3);
    client.destroy();
  });

  it('a write with a binary attribute goes by the SDK path, which encodes it', async () => {
    const tableName = await freshTable();
    const client = clientFor(local.endpoint);
    const stack = sdkPathWrites(client);
    const writes = new HotDynamoDbWrites(client);
    const binary = { ...ITEM, data: { B: new Uint8Array([0, 1, 2]) } };
    await writes.putItem(put(tableName, binary));
    expect(stack.count()).toBe(1);
    const { Item } = await client.send(new GetItemCommand({ TableName: tableName, Key: { [PK]: ITEM[PK] }, ConsistentRead: true }));
    expect(Item?.data?.B).toEqual(new Uint8Array([0, 1, 2]));
    client.destroy();
  });
});

describe('the hot writes against a scripted endpoint', () => {
  it('a failed condition carries the old item (ALL_OLD) as the SDK reads it, and nothing is sent again', async () => {
    const server = await scriptedServer([CONDITION_FAILED(ITEM)]);
    const client = clientFor(server.endpoint, { maxAttempts: 3 });
    try {
      const error = await new HotDynamoDbWrites(client).putItem(put('t')).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConditionalCheckFailedException);
      expect((error as ConditionalCheckFailedException).Item).toEqual(ITEM);
      expect((error as ConditionalCheckFailedException).$metadata.attempts).toBe(1);
      expect(server.requests).toHaveLength(1);
      expect(fromSdk(server.requests[0] as Recorded)).toBe(false);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it("a throttled write is the SDK's first attempt: its second goes after the SDK's backoff, and the write is one call", async () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const server = await scriptedServer([THROTTLED, { status: 200, body: {} }]);
    const client = clientFor(server.endpoint, { maxAttempts: 3 });
    const counter = countAwsCalls(client);
    try {
      expect(await new HotDynamoDbWrites(client).updateItem({ TableName: 't', Key: { [PK]: { S: 'k' } }, UpdateExpression: 'SET a = :a' })).toMatchObject({});
      expect(server.requests).toHaveLength(2);
      expect(server.requests.map((r) => r.headers['amz-sdk-request'])).toEqual([undefined, 'attempt=2; max=3']);
      // The SDK's throttling backoff: a base of a second, here half of it.
      expect((server.requests[1] as Recorded).at - (server.requests[0] as Recorded).at).toBeGreaterThanOrEqual(450);
      expect(counter.snapshot()).toEqual({ UpdateItem: 1 });
      expect(counter.attempts()).toEqual({ UpdateItem: 2 });
    } finally {
      random.mockRestore();
      client.destroy();
      await server.close();
    }
  });

  it('a success the hot path does not read (consumed capacity) is read by the SDK from the hot answer, not written again', async () => {
    const server = await scriptedServer([{ status: 200, body: { ConsumedCapacity: { TableName: 't', CapacityUnits: 1 } } }]);
    const client = clientFor(server.endpoint);
    try {
      const answer = await new HotDynamoDbWrites(client).putItem(put('t'));
      expect(answer).toMatchObject({ ConsumedCapacity: { TableName: 't', CapacityUnits: 1 } });
      expect(server.requests).toHaveLength(1);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it('a refusal of the wire (a bad signature) sends the write again by the SDK path, and a wire refused every time is given up', async () => {
    const server = await scriptedServer((request) =>
      fromSdk(request)
        ? { status: 200, body: {} }
        : { status: 400, body: { __type: 'com.amazon.coral.service#InvalidSignatureException', message: 'refused' } },
    );
    const client = clientFor(server.endpoint, { maxAttempts: 1 });
    const dropped: string[] = [];
    try {
      const writes = new HotDynamoDbWrites(client, { onWireDropped: (reason) => dropped.push(reason) });
      for (let i = 0; i < MAX_MISSES_IN_A_ROW + 2; i++) expect(await writes.putItem(put('t'))).toMatchObject({});
      expect(dropped).toEqual([`its writes failed ${MAX_MISSES_IN_A_ROW} times in a row where the SDK path then succeeded`]);
      expect(server.requests.map(fromSdk)).toEqual([false, true, false, true, false, true, true, true]);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it('a refused connection sends the write by the SDK path, whose error the caller sees', async () => {
    const server = await scriptedServer([{ status: 200, body: {} }]);
    await server.close();
    const client = clientFor(server.endpoint, { maxAttempts: 1 });
    const stack = sdkPathWrites(client);
    try {
      const error = await new HotDynamoDbWrites(client).putItem(put('t')).catch((caught: unknown) => caught);
      expect((error as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
      expect(stack.count()).toBe(1);
    } finally {
      client.destroy();
    }
  });

  it('a fault injected into the client after the writes were built surfaces: the SDK path keeps it', async () => {
    const server = await scriptedServer([{ status: 200, body: {} }]);
    const client = clientFor(server.endpoint);
    const writes = new HotDynamoDbWrites(client);
    const fault = new Error('injected fault');
    client.middlewareStack.add(
      () => () => {
        throw fault;
      },
      { step: 'initialize', name: 'injectedFault' },
    );
    try {
      await expect(writes.putItem(put('t'))).rejects.toBe(fault);
      expect(server.requests).toHaveLength(0);
    } finally {
      client.destroy();
      await server.close();
    }
  });
});

// A record with every field: the hot path sends what the SDK path sends, byte for byte in meaning.
describe('the hot PutItem body', () => {
  it("is the SDK path's request body for the store's create", async () => {
    const server = await scriptedServer([{ status: 200, body: {} }]);
    const client = clientFor(server.endpoint);
    try {
      const record = makeRecord({ token: 'token-body', statusMessage: 'é \u{1F600}' });
      await new DynamoDbRecordStore({ client, tableName: 't', writes: new HotDynamoDbWrites(client) }).create(record);
      await new DynamoDbRecordStore({ client, tableName: 't' }).create(record);
      const [hot, sdk] = server.requests as [Recorded, Recorded];
      expect(fromSdk(hot)).toBe(false);
      expect(fromSdk(sdk)).toBe(true);
      expect(JSON.parse(hot.body.toString('utf8'))).toEqual(JSON.parse(sdk.body.toString('utf8')));
      expect(hot.headers['x-amz-target']).toBe(sdk.headers['x-amz-target']);
      expect(hot.headers['content-type']).toBe(sdk.headers['content-type']);
    } finally {
      client.destroy();
      await server.close();
    }
  });
});
