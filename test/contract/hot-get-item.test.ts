import {
  DynamoDBClient,
  GetItemCommand,
  InternalServerError,
  ProvisionedThroughputExceededException,
  PutItemCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AWS_CLIENT_CONFIG } from '../../lambdas/aws/aws-client-config.ts';
import { countAwsCalls } from '../../lambdas/aws/aws-call-counter.ts';
import { DynamoDbRecordStore } from '../../lambdas/aws/dynamodb-record-store.ts';
import { HotGetItem, MAX_MISSES_IN_A_ROW } from '../../lambdas/aws/hot-get-item.ts';
import { lambdaEnvironmentWire } from '../../lambdas/aws/lambda-environment-wire.ts';
import { lazyDynamoDbClient } from '../../lambdas/aws/lazy-dynamodb-client.ts';
import { lazyDynamoDbRecordStore } from '../../lambdas/aws/lazy-dynamodb-record-store.ts';
import { RecordStoreError } from '../../lambdas/aws/record-store-error.ts';
import { KeyTooLongError } from '../../lambdas/aws/dynamodb-limits.ts';
import { PK, operationPk } from '../../lambdas/aws/operation-item.ts';
import { verifySigV4 } from '../../local/iam/sigv4-verifier.ts';
import { fullRecord } from './record-store-fixtures.ts';
import { type Answer, fromSdk, type Recorded, scriptedServer } from './hot-scripted-server.ts';
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
    const { endpoint, requests, ...server } = await scriptedServer([
      { status: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'injected' } },
      { status: 200, body: { Item: ITEM } },
    ]);
    const client = clientFor(endpoint, { maxAttempts: 2 });
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
      await server.close();
    }
  });

  const THROTTLED: Answer = {
    status: 400,
    body: { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'Rate of requests exceeds the allowed throughput' },
  };
  const FAILING: Answer = { status: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'injected' } };

  it("a throttled poll adds no attempt to the SDK's own and waits its backoff: the hot read is the SDK's first attempt", async () => {
    // The SDK's backoff is a random share of its bound (full jitter); half of it here, so the wait has a floor.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { endpoint, requests, ...server } = await scriptedServer([THROTTLED, THROTTLED, { status: 200, body: { Item: ITEM } }]);
    // The deployed clients' bound (MAX_ATTEMPTS).
    const client = clientFor(endpoint, { maxAttempts: 3 });
    const counter = countAwsCalls(client);
    try {
      const answer = await new HotGetItem(client).send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true });
      expect(answer.Item).toEqual(ITEM);
      // Three requests, as the SDK alone (maxAttempts 3) would send: the hot read, then the SDK's second and third attempts.
      expect(requests).toHaveLength(3);
      expect(requests.map((r) => r.headers['amz-sdk-request'])).toEqual([undefined, 'attempt=2; max=3', 'attempt=3; max=3']);
      // The SDK's throttling backoff: a base of a second, doubling, here half of each bound (500 ms, then 1 s).
      const gaps = requests.slice(1).map((r, i) => r.at - (requests[i] as Recorded).at);
      expect(gaps[0]).toBeGreaterThanOrEqual(450);
      expect(gaps[1]).toBeGreaterThanOrEqual(950);
      expect(counter.snapshot()).toEqual({ GetItem: 1 });
      expect(counter.attempts()).toEqual({ GetItem: 3 });
    } finally {
      random.mockRestore();
      client.destroy();
      await server.close();
    }
  });

  it("a poll that meets a 5xx on every attempt costs the SDK's attempts and no more, and yields the SDK's error", async () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { endpoint, requests, ...server } = await scriptedServer([FAILING]);
    const client = clientFor(endpoint, { maxAttempts: 3 });
    try {
      const error = await new HotGetItem(client).send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InternalServerError);
      const { attempts, totalRetryDelay = 0 } = (error as InternalServerError).$metadata;
      expect(attempts).toBe(3);
      expect(requests).toHaveLength(3);
      // The SDK waited its backoff for a server error (DynamoDB's base, doubling, here half of each bound) between the requests.
      expect(totalRetryDelay).toBeGreaterThan(0);
      expect((requests[2] as Recorded).at - (requests[0] as Recorded).at).toBeGreaterThanOrEqual(totalRetryDelay - 2);
    } finally {
      random.mockRestore();
      client.destroy();
      await server.close();
    }
  });

  it('a throttled poll on a client of one attempt is answered by the throttle, as the SDK alone would be', async () => {
    const { endpoint, requests, ...server } = await scriptedServer([THROTTLED, { status: 200, body: { Item: ITEM } }]);
    const client = clientFor(endpoint, { maxAttempts: 1 });
    try {
      const error = await new HotGetItem(client).send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProvisionedThroughputExceededException);
      expect(requests).toHaveLength(1);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it('gives up a wire the service refuses every time while the SDK path is answered, so a wire fault does not double every poll', async () => {
    // The hot path (no SDK invocation id) is refused as a bad signature would be; the SDK path is answered.
    const {
      endpoint,
      requests: recorded,
      ...server
    } = await scriptedServer((request) =>
      fromSdk(request)
        ? { status: 200, body: { Item: ITEM } }
        : { status: 400, body: { __type: 'com.amazon.coral.service#InvalidSignatureException', message: 'refused' } },
    );
    const client = clientFor(endpoint, { maxAttempts: 1 });
    const dropped: string[] = [];
    try {
      const reader = new HotGetItem(client, undefined, { onWireDropped: (reason) => dropped.push(reason) });
      const read = () => reader.send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true });
      for (let i = 1; i <= MAX_MISSES_IN_A_ROW; i++) {
        expect((await read()).Item).toEqual(ITEM);
        expect(recorded.filter((r) => !fromSdk(r))).toHaveLength(i);
      }
      expect(dropped).toEqual([`its reads failed ${MAX_MISSES_IN_A_ROW} times in a row where the SDK path then succeeded`]);
      // From now on one request per read, the SDK's.
      const before = recorded.length;
      expect((await read()).Item).toEqual(ITEM);
      expect((await read()).Item).toEqual(ITEM);
      expect(recorded.slice(before).map(fromSdk)).toEqual([true, true]);
      expect(dropped).toHaveLength(1);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it('keeps a wire whose misses are not in a row: a hot read that succeeds in between starts the count again', async () => {
    // Refused as a bad signature would be: the wire's fault, which the SDK path sends afresh.
    const REFUSED: Answer = { status: 400, body: { __type: 'com.amazon.coral.service#InvalidSignatureException', message: 'refused' } };
    const { endpoint, requests, ...server } = await scriptedServer([
      REFUSED,
      { status: 200, body: { Item: ITEM } },
      REFUSED,
      { status: 200, body: { Item: ITEM } },
      { status: 200, body: { Item: ITEM } },
      REFUSED,
      { status: 200, body: { Item: ITEM } },
      { status: 200, body: { Item: ITEM } },
    ]);
    const client = clientFor(endpoint, { maxAttempts: 1 });
    let dropped = 0;
    try {
      const reader = new HotGetItem(client, undefined, { onWireDropped: () => dropped++ });
      // Miss, miss, hot hit, miss, hot hit: never three in a row.
      for (let i = 0; i < 5; i++) expect((await reader.send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true })).Item).toEqual(ITEM);
      expect(dropped).toBe(0);
      expect(requests.map((r) => r.headers['amz-sdk-invocation-id'] !== undefined)).toEqual([false, true, false, true, false, false, true, false]);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it('says so when its wire cannot be built (a signer module not found, say), and reads by the SDK path', async () => {
    const { endpoint, requests, ...server } = await scriptedServer([{ status: 200, body: { Item: ITEM } }]);
    const client = clientFor(endpoint, { maxAttempts: 1 });
    const dropped: string[] = [];
    try {
      const unbuildable = () => Promise.reject(new Error("Cannot find package '@smithy/signature-v4'"));
      const reader = new HotGetItem(client, unbuildable, { onWireDropped: (reason) => dropped.push(reason) });
      for (let i = 0; i < 2; i++) expect((await reader.send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true })).Item).toEqual(ITEM);
      expect(dropped).toEqual(["it could not be built (Error: Cannot find package '@smithy/signature-v4')"]);
      expect(requests.map((r) => r.headers['amz-sdk-invocation-id'] !== undefined)).toEqual([true, true]);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it("falls back to the SDK on a 400 and yields the SDK's error", async () => {
    const { endpoint, requests, ...server } = await scriptedServer([
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
      await server.close();
    }
  });

  it("falls back to the SDK on a refused connection and yields the SDK's error", async () => {
    const { endpoint, ...server } = await scriptedServer([{ status: 200, body: {} }]);
    await server.close();
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
    const { endpoint, requests, ...server } = await scriptedServer([{ status: 200, body: { Item: ITEM } }]);
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
      const received = asReceived(sent);
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
      await server.close();
    }
  });
});

/** A recorded request as the SigV4 verifier takes it. */
function asReceived(sent: Recorded) {
  return {
    method: sent.method ?? '',
    host: sent.headers.host ?? '',
    path: sent.url ?? '/',
    query: new URLSearchParams(),
    headers: Object.fromEntries(Object.entries(sent.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : value])),
    body: new Uint8Array(sent.body),
  };
}

/** The SHA-256 constructor a DynamoDB client's config signs with. */
function sha256Of() {
  const client = new DynamoDBClient({ region: 'us-east-1', credentials: CREDENTIALS });
  client.destroy();
  return (client.config as unknown as { sha256: ConstructorParameters<typeof import('@smithy/signature-v4').SignatureV4>[0]['sha256'] }).sha256;
}

describe("the hot GetItem's signer", () => {
  it("signs every read as the client's own signer does, the first by that signer and the rest by the lean one", async () => {
    const { endpoint, requests, ...server } = await scriptedServer([{ status: 200, body: { Item: ITEM } }]);
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const sdkSigner = new SignatureV4({ service: 'dynamodb', region: 'us-east-1', credentials: CREDENTIALS, sha256: sha256Of() });
    let sdkSigns = 0;
    const sdkSign = sdkSigner.sign.bind(sdkSigner) as (...args: unknown[]) => Promise<unknown>;
    const signer = {
      sign: (...args: unknown[]) => {
        sdkSigns++;
        return sdkSign(...args);
      },
    } as unknown as InstanceType<typeof SignatureV4>;
    const client = new DynamoDBClient({ ...AWS_CLIENT_CONFIG, endpoint, region: 'us-east-1', credentials: CREDENTIALS, signer });
    try {
      const reader = new HotGetItem(client);
      for (let i = 0; i < 4; i++)
        expect((await reader.send({ TableName: 'operations', Key: { [PK]: { S: `OP#owner-1#token-${i}` } }, ConsistentRead: true })).Item).toEqual(ITEM);
      expect(sdkSigns).toBe(1);
      expect(requests).toHaveLength(4);
      for (const sent of requests) {
        expect(sent.headers['amz-sdk-invocation-id']).toBeUndefined();
        const verified = await verifySigV4(asReceived(sent), {
          service: 'dynamodb',
          region: 'us-east-1',
          lookup: (id) => (id === CREDENTIALS.accessKeyId ? CREDENTIALS : undefined),
        });
        expect(verified.ok).toBe(true);
      }
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it('keeps a client signer that signs otherwise (another signing region) for every read', async () => {
    const { endpoint, requests, ...server } = await scriptedServer([{ status: 200, body: { Item: ITEM } }]);
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const signer = new SignatureV4({ service: 'dynamodb', region: 'eu-west-1', credentials: CREDENTIALS, sha256: sha256Of() });
    const client = new DynamoDBClient({ ...AWS_CLIENT_CONFIG, endpoint, region: 'us-east-1', credentials: CREDENTIALS, signer });
    try {
      const reader = new HotGetItem(client);
      for (let i = 0; i < 3; i++) expect((await reader.send({ TableName: 'operations', Key: { [PK]: { S: 'k' } }, ConsistentRead: true })).Item).toEqual(ITEM);
      expect(requests).toHaveLength(3);
      for (const sent of requests) expect(sent.headers.authorization).toContain('/eu-west-1/dynamodb/aws4_request');
    } finally {
      client.destroy();
      await server.close();
    }
  });
});

/** What Lambda's runtime gives every function, with the endpoint the local as-deployed stack adds. */
const LAMBDA_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'ASIAHOTREADENV',
  AWS_SECRET_ACCESS_KEY: 'hot-read-env-secret',
  AWS_SESSION_TOKEN: 'hot-read-env-token',
};

/** The full client the SDK path loads, on the same endpoint and credentials as the environment's wire. */
function lazyClientFor(endpoint: string, extra: { maxAttempts?: number } = {}) {
  const credentials = {
    accessKeyId: LAMBDA_ENV.AWS_ACCESS_KEY_ID,
    secretAccessKey: LAMBDA_ENV.AWS_SECRET_ACCESS_KEY,
    sessionToken: LAMBDA_ENV.AWS_SESSION_TOKEN,
  };
  return lazyDynamoDbClient({ ...AWS_CLIENT_CONFIG, endpoint, region: LAMBDA_ENV.AWS_REGION, credentials, ...extra });
}

describe("the hot GetItem over the Lambda environment's wire, without the DynamoDB client", () => {
  it('signs its request with SigV4 for dynamodb, with the session token, and loads no client', async () => {
    const { endpoint, requests, ...server } = await scriptedServer([{ status: 200, body: { Item: ITEM } }]);
    const client = lazyClientFor(endpoint);
    try {
      const reader = new HotGetItem(client, lambdaEnvironmentWire({ ...LAMBDA_ENV, AWS_ENDPOINT_URL_DYNAMODB: endpoint }));
      const request = { TableName: 'operations', Key: { [PK]: { S: 'OP#owner-1#token-1' } }, ConsistentRead: true } as const;
      expect((await reader.send(request)).Item).toEqual(ITEM);
      expect(client.built()).toBeUndefined();
      expect(requests).toHaveLength(1);
      const [sent] = requests as [Recorded];
      expect(sent.method).toBe('POST');
      expect(sent.url).toBe('/');
      expect(sent.headers['x-amz-target']).toBe('DynamoDB_20120810.GetItem');
      expect(sent.headers['content-type']).toBe('application/x-amz-json-1.0');
      expect(sent.headers['x-amz-security-token']).toBe(LAMBDA_ENV.AWS_SESSION_TOKEN);
      expect(JSON.parse(sent.body.toString('utf8'))).toEqual(request);
      const received = asReceived(sent);
      const session = { secretAccessKey: LAMBDA_ENV.AWS_SECRET_ACCESS_KEY, sessionToken: LAMBDA_ENV.AWS_SESSION_TOKEN };
      const verified = await verifySigV4(received, {
        service: 'dynamodb',
        region: 'us-east-1',
        lookup: (id) => (id === LAMBDA_ENV.AWS_ACCESS_KEY_ID ? session : undefined),
      });
      expect(verified.ok).toBe(true);
      const wrongSecret = await verifySigV4(received, {
        service: 'dynamodb',
        region: 'us-east-1',
        lookup: () => ({ ...session, secretAccessKey: 'another-secret' }),
      });
      expect(wrongSecret.ok).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('reads from AWS_ENDPOINT_URL when no DynamoDB endpoint is set, and otherwise from the standard regional endpoint', async () => {
    const generic = await lambdaEnvironmentWire({ ...LAMBDA_ENV, AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' })?.();
    expect(generic?.url.href).toBe('http://127.0.0.1:4566/');
    const specific = await lambdaEnvironmentWire({
      ...LAMBDA_ENV,
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000',
    })?.();
    expect(specific?.url.href).toBe('http://127.0.0.1:8000/');
    const regional = await lambdaEnvironmentWire({ ...LAMBDA_ENV, AWS_REGION: 'eu-west-1' })?.();
    expect(regional?.url.href).toBe('https://dynamodb.eu-west-1.amazonaws.com/');
  });

  it.each([
    ['no region', { AWS_REGION: undefined }],
    ['no access key', { AWS_ACCESS_KEY_ID: undefined }],
    ['no secret key', { AWS_SECRET_ACCESS_KEY: '' }],
    ['no session token', { AWS_SESSION_TOKEN: undefined }],
    ['a China region', { AWS_REGION: 'cn-north-1' }],
    ['a GovCloud region', { AWS_REGION: 'us-gov-west-1' }],
    ['an ISO region', { AWS_REGION: 'us-iso-east-1' }],
    ['a region it cannot read', { AWS_REGION: 'us-east-1 ' }],
    ['FIPS endpoints', { AWS_USE_FIPS_ENDPOINT: 'true' }],
    ['dual-stack endpoints', { AWS_USE_DUALSTACK_ENDPOINT: 'true' }],
    ['required account endpoints', { AWS_ACCOUNT_ID_ENDPOINT_MODE: 'required' }],
    ['configured endpoints ignored', { AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' }],
    ['an endpoint that is not a URL', { AWS_ENDPOINT_URL_DYNAMODB: 'dynamodb.local' }],
    ['an endpoint with a query', { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000/?x=1' }],
    ['an endpoint on a path the signer would have to escape', { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000/a%20b/' }],
  ])('with %s, the environment gives no wire: the full client serves the read', (_case, change) => {
    expect(lambdaEnvironmentWire({ ...LAMBDA_ENV, ...change })).toBeUndefined();
  });

  it('without a wire from the environment, the first read loads the client and reads by its parts', async () => {
    const tableName = `hot-${++tables}`;
    await createOperationsTable(local.client, tableName);
    await local.client.send(new PutItemCommand({ TableName: tableName, Item: ITEM }));
    const client = lazyClientFor(local.endpoint);
    const reader = new HotGetItem(client, lambdaEnvironmentWire({ ...LAMBDA_ENV, AWS_REGION: 'cn-north-1', AWS_ENDPOINT_URL_DYNAMODB: local.endpoint }));
    expect(client.built()).toBeUndefined();
    const answer = await reader.send({ TableName: tableName, Key: { [PK]: { S: 'OP#owner-1#token-1' } }, ConsistentRead: true });
    expect(answer.Item).toEqual(ITEM);
    const built = client.built();
    expect(built).toBeDefined();
    // Later reads take the client's own hot path: the counter sees them, its middleware does not.
    const counter = countAwsCalls(built as DynamoDBClient);
    const stack = sdkPathCalls(built as DynamoDBClient);
    expect((await reader.send({ TableName: tableName, Key: { [PK]: { S: 'OP#owner-1#token-1' } }, ConsistentRead: true })).Item).toEqual(ITEM);
    expect(stack.count()).toBe(0);
    expect(counter.snapshot()).toEqual({ GetItem: 1 });
    built?.destroy();
  });

  it.each([
    ['a 500', { status: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'injected' } }],
    ['a body that is not JSON', { status: 200, body: '{"Item": {"pk"' }],
    ['an item the hot path does not decode', { status: 200, body: { Item: { data: { B: 'AAEC' } } } }],
  ])('falls back to the SDK on %s, loading the client then, and yields its result', async (_case, first) => {
    const { endpoint, requests, ...server } = await scriptedServer([first, { status: 200, body: { Item: ITEM } }]);
    // Two attempts: a 500 is the SDK path's first, answered by the hot read.
    const client = lazyClientFor(endpoint, { maxAttempts: 2 });
    try {
      const reader = new HotGetItem(client, lambdaEnvironmentWire({ ...LAMBDA_ENV, AWS_ENDPOINT_URL_DYNAMODB: endpoint }));
      const answer = await reader.send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true });
      expect(answer.Item).toEqual(ITEM);
      expect(requests).toHaveLength(2);
      expect(requests[0]?.headers['amz-sdk-invocation-id']).toBeUndefined();
      expect(requests[1]?.headers['amz-sdk-invocation-id']).toBeDefined();
      expect(client.built()).toBeDefined();
    } finally {
      client.built()?.destroy();
      await server.close();
    }
  });

  it('a refused connection falls back to the SDK, whose error the caller sees', async () => {
    const { endpoint, ...server } = await scriptedServer([{ status: 200, body: {} }]);
    await server.close();
    const client = lazyClientFor(endpoint, { maxAttempts: 1 });
    const reader = new HotGetItem(client, lambdaEnvironmentWire({ ...LAMBDA_ENV, AWS_ENDPOINT_URL_DYNAMODB: endpoint }));
    const error = await reader.send({ TableName: 't', Key: { [PK]: { S: 'k' } }, ConsistentRead: true }).catch((caught: unknown) => caught);
    expect((error as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    client.built()?.destroy();
  });

  it("the MCP function's store answers a poll's get as the SDK store does, without loading the client", async () => {
    const tableName = `hot-${++tables}`;
    await createOperationsTable(local.client, tableName);
    const plain = new DynamoDbRecordStore({ client: local.client, tableName });
    const record = fullRecord();
    expect((await plain.create(record)).created).toBe(true);
    await local.client.send(
      new PutItemCommand({ TableName: tableName, Item: { [PK]: { S: operationPk({ ownerId: 'owner-1', token: 'malformed' }) }, status: { S: 'working' } } }),
    );
    const client = lazyClientFor(local.endpoint);
    const operationReads = new HotGetItem(client, lambdaEnvironmentWire({ ...LAMBDA_ENV, AWS_ENDPOINT_URL_DYNAMODB: local.endpoint }));
    const lazy = lazyDynamoDbRecordStore({ client, tableName, operationReads });
    const key = { ownerId: record.ownerId, token: record.token };
    expect(await lazy.get(key)).toEqual(await plain.get(key));
    expect(await lazy.get({ ownerId: record.ownerId, token: 'absent' })).toBeUndefined();
    const malformed = { ownerId: 'owner-1', token: 'malformed' };
    const viaLazy = await lazy.get(malformed).catch((caught: unknown) => caught);
    const viaPlain = await plain.get(malformed).catch((caught: unknown) => caught);
    expect(viaLazy).toBeInstanceOf(RecordStoreError);
    expect((viaLazy as Error).message).toBe((viaPlain as Error).message);
    // A token whose key is over DynamoDB's limit is refused as the store refuses it, before any read.
    const tooLong = { ownerId: 'owner-1', token: 'x'.repeat(2100) };
    await expect(lazy.get(tooLong)).rejects.toBeInstanceOf(KeyTooLongError);
    await expect(plain.get(tooLong)).rejects.toBeInstanceOf(KeyTooLongError);
    expect(client.built()).toBeUndefined();
    // A write loads the client and the store; a read then is the store's, as before.
    expect(await lazy.listActiveSlots(record.ownerId)).toEqual([]);
    expect(client.built()).toBeDefined();
    expect(await lazy.get(key)).toEqual(record);
    client.built()?.destroy();
  });
});
