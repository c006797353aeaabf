/**
 * One contract for every RequestStateStore: in memory, files, and DynamoDB (dynalite).
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defaultStateDir,
  DynamoDbRequestStateStore,
  FileRequestStateStore,
  MemoryRequestStateStore,
  type RequestStateStore,
  type StoredCall,
} from '../../client/index.ts';
import { startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';

let dir: string;
let dynamo: LocalDynamo;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'async-mcp-store-'));
  dynamo = await startLocalDynamo();
  await dynamo.client.send(
    new CreateTableCommand({
      TableName: 'client-calls',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
});
afterAll(async () => {
  await dynamo?.close();
  await rm(dir, { recursive: true, force: true });
});

function entry(id: string, createdAt: string): StoredCall {
  return { handle: { id, url: 'http://127.0.0.1:3000/mcp', dialect: 'tasks', tool: 'slow_compute', createdAt, remoteId: `task-${id}` } };
}

const stores: Array<[string, () => RequestStateStore]> = [
  ['memory', () => new MemoryRequestStateStore()],
  ['file', () => new FileRequestStateStore(join(dir, String(Math.random()).slice(2)))],
  ['dynamodb', () => new DynamoDbRequestStateStore({ client: dynamo.client, tableName: 'client-calls', namespace: String(Math.random()).slice(2) })],
];

describe.each(stores)('%s RequestStateStore', (_name, makeStore) => {
  it('keeps, replaces, lists newest first and deletes entries', async () => {
    const store = makeStore();
    expect(await store.list()).toEqual([]);
    expect(await store.get('missing')).toBeUndefined();
    await store.put(entry('a', '2026-01-01T00:00:00.000Z'));
    await store.put(entry('b', '2026-01-02T00:00:00.000Z'));
    const finished = { ...entry('a', '2026-01-01T00:00:00.000Z'), result: { content: [{ type: 'text', text: 'done' }] } };
    await store.put(finished);
    expect(await store.get('a')).toEqual(finished);
    expect((await store.list()).map((e) => e.handle.id)).toEqual(['b', 'a']);
    await store.delete('a');
    await store.delete('a');
    expect((await store.list()).map((e) => e.handle.id)).toEqual(['b']);
  });

  it('refuses ids that could name another file or key', async () => {
    const store = makeStore();
    await expect(store.get('../etc/passwd')).rejects.toThrow(/Not a call id/);
    await expect(store.put(entry('a/b', '2026-01-01T00:00:00.000Z'))).rejects.toThrow(/Not a call id/);
  });
});

describe('file store', () => {
  it('writes one JSON file per handle, readable by the user only', async () => {
    const store = new FileRequestStateStore(join(dir, 'perm'));
    await store.put(entry('one', '2026-01-01T00:00:00.000Z'));
    expect(await readdir(join(dir, 'perm'))).toEqual(['one.json']);
    expect((await stat(join(dir, 'perm', 'one.json'))).mode & 0o777).toBe(0o600);
  });

  it('lives in ASYNC_MCP_STATE_DIR, else the platform state directory', () => {
    expect(defaultStateDir({ ASYNC_MCP_STATE_DIR: '/x/y' }, 'linux')).toBe('/x/y');
    expect(defaultStateDir({ XDG_STATE_HOME: '/state' }, 'linux')).toBe('/state/async-mcp');
    expect(defaultStateDir({}, 'linux')).toMatch(/\.local\/state\/async-mcp$/);
    expect(defaultStateDir({}, 'darwin')).toMatch(/Library\/Application Support\/async-mcp$/);
  });
});

describe('DynamoDB store', () => {
  it('namespaces share a table without seeing each other, and an expired entry reads as gone', async () => {
    const mine = new DynamoDbRequestStateStore({ client: dynamo.client, tableName: 'client-calls', namespace: 'mine' });
    const theirs = new DynamoDbRequestStateStore({ client: dynamo.client, tableName: 'client-calls', namespace: 'theirs' });
    await mine.put(entry('a', '2026-01-01T00:00:00.000Z'));
    expect(await theirs.get('a')).toBeUndefined();
    expect(await theirs.list()).toEqual([]);
    const expiring = new DynamoDbRequestStateStore({ client: dynamo.client, tableName: 'client-calls', namespace: 'ttl', ttlSeconds: -1 });
    await expiring.put(entry('old', '2026-01-01T00:00:00.000Z'));
    expect(await expiring.get('old')).toBeUndefined();
  });
});
