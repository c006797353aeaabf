/**
 * The AWS call counter on real SDK clients: against dynalite for real calls, and with only
 * the transport replaced where a fault must be injected (a retried attempt).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DeleteItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand, ResourceNotFoundException, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { HttpResponse, type HttpRequest } from '@smithy/protocol-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countAwsCalls } from '../../lambdas/aws/aws-call-counter.ts';
import { startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';

let dynamo: LocalDynamo;
let client: DynamoDBClient;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  // A client of our own, without the local size-limit middleware (its DescribeTable would be counted too).
  client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});
afterAll(async () => {
  client?.destroy();
  await dynamo?.close();
});

const key = (id: string) => ({ pk: { S: `counter#${id}` } });

/** A client whose transport answers with `responses` in turn (DynamoDB's JSON protocol), recording each request. */
function clientWithTransport(responses: Array<{ statusCode: number; body: unknown; headers?: Record<string, string> }>) {
  const sent: HttpRequest[] = [];
  const transport = {
    handle: async (request: HttpRequest) => {
      sent.push(request);
      const next = responses[Math.min(sent.length - 1, responses.length - 1)]!;
      return {
        response: new HttpResponse({
          statusCode: next.statusCode,
          headers: { 'content-type': 'application/x-amz-json-1.0', ...next.headers },
          body: Buffer.from(JSON.stringify(next.body)),
        }),
      };
    },
  };
  const mocked = new DynamoDBClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: transport as never,
    maxAttempts: 3,
  });
  return { client: mocked, sent };
}

describe('countAwsCalls', () => {
  it('counts each command a real client sends, by name without the Command suffix', async () => {
    const counter = countAwsCalls(client);
    try {
      await client.send(new PutItemCommand({ TableName: dynamo.tableName, Item: { ...key('a'), n: { N: '1' } } }));
      await client.send(new GetItemCommand({ TableName: dynamo.tableName, Key: key('a') }));
      await client.send(new GetItemCommand({ TableName: dynamo.tableName, Key: key('a') }));
      await client.send(
        new UpdateItemCommand({ TableName: dynamo.tableName, Key: key('a'), UpdateExpression: 'SET n = :n', ExpressionAttributeValues: { ':n': { N: '2' } } }),
      );
      await client.send(new DeleteItemCommand({ TableName: dynamo.tableName, Key: key('a') }));
      expect(counter.snapshot()).toEqual({ PutItem: 1, GetItem: 2, UpdateItem: 1, DeleteItem: 1 });
      expect(counter.attempts()).toEqual({ PutItem: 1, GetItem: 2, UpdateItem: 1, DeleteItem: 1 });
    } finally {
      counter.remove();
    }
  });

  it('diff gives the calls made since a snapshot, without commands that had none; reset forgets them', async () => {
    const counter = countAwsCalls(client);
    try {
      await client.send(new PutItemCommand({ TableName: dynamo.tableName, Item: key('b') }));
      const before = counter.snapshot();
      await client.send(new GetItemCommand({ TableName: dynamo.tableName, Key: key('b') }));
      expect(counter.diff(before)).toEqual({ GetItem: 1 });
      // A snapshot is a copy: later calls do not change it.
      expect(before).toEqual({ PutItem: 1 });
      counter.reset();
      expect(counter.snapshot()).toEqual({});
      expect(counter.attempts()).toEqual({});
    } finally {
      counter.remove();
    }
  });

  it('a call that fails is still a call', async () => {
    const counter = countAwsCalls(client);
    try {
      await expect(client.send(new GetItemCommand({ TableName: 'no-such-table', Key: key('c') }))).rejects.toBeInstanceOf(ResourceNotFoundException);
      expect(counter.snapshot()).toEqual({ GetItem: 1 });
    } finally {
      counter.remove();
    }
  });

  it('a call the SDK retries counts once as a call and once per attempt in attempts', async () => {
    // A 500 is retried after a short backoff (a throttle waits longer, and would slow the test).
    const failing = { statusCode: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'try again' } };
    const { client: mocked, sent } = clientWithTransport([failing, failing, { statusCode: 200, body: { Item: { pk: { S: 'x' } } } }]);
    try {
      const counter = countAwsCalls(mocked);
      const { Item } = await mocked.send(new GetItemCommand({ TableName: 't', Key: key('d') }));
      expect(Item).toEqual({ pk: { S: 'x' } });
      expect(sent).toHaveLength(3);
      expect(counter.snapshot()).toEqual({ GetItem: 1 });
      expect(counter.attempts()).toEqual({ GetItem: 3 });
    } finally {
      mocked.destroy();
    }
  });

  it('when() counts only the calls made where it holds, and remove() stops counting', async () => {
    const inScope = new AsyncLocalStorage<true>();
    const scoped = countAwsCalls(client, { when: () => inScope.getStore() === true });
    const all = countAwsCalls(client);
    await inScope.run(true, () => client.send(new GetItemCommand({ TableName: dynamo.tableName, Key: key('e') })));
    await client.send(new GetItemCommand({ TableName: dynamo.tableName, Key: key('e') }));
    expect(scoped.snapshot()).toEqual({ GetItem: 1 });
    expect(all.snapshot()).toEqual({ GetItem: 2 });
    scoped.remove();
    all.remove();
    await client.send(new GetItemCommand({ TableName: dynamo.tableName, Key: key('e') }));
    expect(all.snapshot()).toEqual({ GetItem: 2 });
  });
});
