import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand, PutItemCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AWS_CLIENT_CONFIG } from '../../lambdas/aws/aws-client-config.ts';
import { countAwsCalls } from '../../lambdas/aws/aws-call-counter.ts';
import { DynamoDbRecordStore } from '../../lambdas/aws/dynamodb-record-store.ts';
import { HotGetItem } from '../../lambdas/aws/hot-get-item.ts';
import { PK } from '../../lambdas/aws/operation-item.ts';
import { verifySigV4 } from '../../local/iam/sigv4-verifier.ts';
import { fullRecord } from './record-store-fixtures.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';

const CREDENTIALS = { accessKeyId: 'AKIDHOTREAD', secretAccessKey: 'hot-read-secret' };

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

/** Counts what goes through the client's middleware stack, i.e. the SDK path only. */
function sdkPathCalls(client: DynamoDBClient): { count: () => number } {
  let count = 0;
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'GetItemCommand') count++;
      return next(args);
    },
    { step: 'initialize', name: 'sdkPathCalls' },
  );
  return { count: () => count };
}

const ITEM = {
  [PK]: { S: 'OP#owner-1#token-1' },
  status: { S: 'working' },
  createdAt: { N: '1764633600000' },
  nested: { M: { list: { L: [{ S: 'a' }, { N: '2' }, { BOOL: true }, { NULL: true }] }, set: { SS: ['x', 'y'] } } },
};

interface Recorded {
  method?: string;
  url?: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A loopback server answering each request with the next of `answers` (the last one repeats), recording what came. */
async function scriptedServer(answers: readonly { status: number; body: unknown }[]): Promise<{ endpoint: string; requests: Recorded[]; server: Server }> {
  const requests: Recorded[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks) });
      const answer = answers[Math.min(requests.length - 1, answers.length - 1)] as { status: number; body: unknown };
      response.writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('the hot GetItem', () => {
  it('returns what the SDK path returns for the same item, as one GetItem, without the middleware stack', async () => {
    const tableName = `hot-${++tables}`;
    await createOperationsTable(local.client, tableName);
    await local.client.send(new PutItemCommand({ TableName: tableName, Item: ITEM }));
    const client = clientFor(local.endpoint);
    const stack = sdkPathCalls(client);
    const counter = countAwsCalls(client);
    const hot = new HotGetItem(client);
    const request = { TableName: tableName, Key: { [PK]: { S: 'OP#owner-1#token-1' } }, ConsistentRead: true } as const;
    const missing = { ...request, Key: { [PK]: { S: 'OP#owner-1#absent' } } };

    const viaHot = await hot.send(request);
    const viaHotMissing = await hot.send(missing);
    expect(stack.count()).toBe(0);
    expect(counter.snapshot()).toEqual({ GetItem: 2 });
    expect(counter.attempts()).toEqual({ GetItem: 2 });

    const viaSdk = await client.send(new GetItemCommand(request));
    const viaSdkMissing = await client.send(new GetItemCommand(missing));
    expect(viaHot.Item).toEqual(viaSdk.Item);
    expect(viaHot.Item).toEqual(ITEM);
    expect(viaHotMissing.Item).toBeUndefined();
    expect(viaSdkMissing.Item).toBeUndefined();
    expect(counter.snapshot()).toEqual({ GetItem: 4 });
    client.destroy();
  });

  it("serves the store's get as the SDK path does", async () => {
    const tableName = `hot-${++tables}`;
    await createOperationsTable(local.client, tableName);
    const plain = new DynamoDbRecordStore({ client: local.client, tableName });
    const client = clientFor(local.endpoint);
    const stack = sdkPathCalls(client);
    const hot = new DynamoDbRecordStore({ client, tableName, operationReads: new HotGetItem(client) });
    const record = fullRecord();
    const created = await plain.create(record);
    expect(created.created).toBe(true);
    const key = { ownerId: record.ownerId, token: record.token };
    const viaHot = await hot.get(key);
    expect(viaHot).toEqual(await plain.get(key));
    expect(viaHot).toEqual(record);
    expect(await hot.get({ ownerId: record.ownerId, token: 'absent' })).toBeUndefined();
    expect(stack.count()).toBe(0);
    client.destroy();
  });

  it('a fault injected into the client after the reader was built still surfaces; a call counter added then still sees the hot read', async () => {
    const tableName = `hot-${++tables}`;
    await createOperationsTable(local.client, tableName);
    const request = { TableName: tableName, Key: { [PK]: { S: 'OP#owner-1#token-1' } }, ConsistentRead: true } as const;

    const faulty = clientFor(local.endpoint);
    const faultyReader = new HotGetItem(faulty);
    const fault = new Error('injected fault');
    faulty.middlewareStack.add(
      () => () => {
        throw fault;
      },
      { step: 'initialize', name: 'injectedFault' },
    );
    await expect(faultyReader.send(request)).rejects.toBe(fault);
    await expect(faultyReader.send(request)).rejects.toBe(fault);

    const counted = clientFor(local.endpoint);
    const countedReader = new HotGetItem(counted);
    const counter = countAwsCalls(counted);
    expect(await countedReader.send(request)).toEqual({});
    expect(counter.snapshot()).toEqual({ GetItem: 1 });
    // The counter's middleware saw no call: the one it counted came from the hot path.
    const stack = sdkPathCalls(counted);
    expect(await countedReader.send(request)).toEqual({});
    expect(stack.count()).toBe(0);
    expect(counter.snapshot()).toEqual({ GetItem: 2 });
    faulty.destroy();
    counted.destroy();
  });

  it('falls back to the SDK on a 500 and yields its result', async () => {
    const { endpoint, requests, server } = await scriptedServer([
      { status: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'injected' } },
      { status: 200, body: { Item: ITEM } },
    ]);
    const client = clientFor(endpoint, { maxAttempts: 1 });
    const stack = sdkPathCalls(client);
    const counter = countAwsCalls(client);
    try {
      const answer = await new HotGetItem(client).send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true });
      expect(answer.Item).toEqual(ITEM);
      expect(requests).toHaveLength(2);
      expect(requests[0]?.headers['amz-sdk-invocation-id']).toBeUndefined();
      expect(requests[1]?.headers['amz-sdk-invocation-id']).toBeDefined();
      expect(stack.count()).toBe(1);
      // One read is one call, whichever path answered it; the wire saw two attempts.
      expect(counter.snapshot()).toEqual({ GetItem: 1 });
      expect(counter.attempts()).toEqual({ GetItem: 2 });
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });

  it("falls back to the SDK on a 400 and yields the SDK's error", async () => {
    const { endpoint, requests, server } = await scriptedServer([
      { status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'Requested resource not found' } },
    ]);
    const client = clientFor(endpoint, { maxAttempts: 1 });
    const stack = sdkPathCalls(client);
    try {
      const error = await new HotGetItem(client).send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ResourceNotFoundException);
      expect((error as Error).message).toBe('Requested resource not found');
      expect(requests).toHaveLength(2);
      expect(stack.count()).toBe(1);
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });

  it("falls back to the SDK on a refused connection and yields the SDK's error", async () => {
    const { endpoint, server } = await scriptedServer([{ status: 200, body: {} }]);
    await closeServer(server);
    const client = clientFor(endpoint, { maxAttempts: 1 });
    const stack = sdkPathCalls(client);
    const request = { TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true } as const;
    try {
      const viaHot = await new HotGetItem(client).send(request).catch((caught: unknown) => caught);
      expect(stack.count()).toBe(1);
      const viaSdk = await client.send(new GetItemCommand(request)).catch((caught: unknown) => caught);
      expect((viaHot as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
      expect((viaHot as Error).name).toBe((viaSdk as Error).name);
      expect((viaHot as NodeJS.ErrnoException).code).toBe((viaSdk as NodeJS.ErrnoException).code);
    } finally {
      client.destroy();
    }
  });

  it('signs its request with SigV4 for dynamodb, as the SDK does', async () => {
    const { endpoint, requests, server } = await scriptedServer([{ status: 200, body: { Item: ITEM } }]);
    const client = clientFor(endpoint);
    try {
      const request = { TableName: 'operations', Key: { [PK]: { S: 'OP#owner-1#token-1' } }, ConsistentRead: true } as const;
      expect((await new HotGetItem(client).send(request)).Item).toEqual(ITEM);
      expect(requests).toHaveLength(1);
      const [sent] = requests as [Recorded];
      expect(sent.method).toBe('POST');
      expect(sent.headers['x-amz-target']).toBe('DynamoDB_20120810.GetItem');
      expect(sent.headers['content-type']).toBe('application/x-amz-json-1.0');
      expect(JSON.parse(sent.body.toString('utf8'))).toEqual(request);
      const received = {
        method: sent.method ?? '',
        host: sent.headers.host ?? '',
        path: sent.url ?? '/',
        query: new URLSearchParams(),
        headers: Object.fromEntries(Object.entries(sent.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : value])),
        body: new Uint8Array(sent.body),
      };
      const verified = await verifySigV4(received, {
        service: 'dynamodb',
        region: 'us-east-1',
        lookup: (id) => (id === CREDENTIALS.accessKeyId ? CREDENTIALS : undefined),
      });
      expect(verified.ok).toBe(true);
      const wrongSecret = await verifySigV4(received, { service: 'dynamodb', region: 'us-east-1', lookup: () => ({ secretAccessKey: 'another-secret' }) });
      expect(wrongSecret.ok).toBe(false);
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });
});
