/**
 * The client library against the local stack: each dialect forced in turn, the best one
 * picked by default, sync tools simply called, timeouts that return nothing, cancellation,
 * and joining again from a fresh store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CallCancelledError,
  CallFailedError,
  FileRequestStateStore,
  MemoryRequestStateStore,
  cancel,
  join,
  list,
  startToolCall,
  status,
  type CallStatus,
  type FetchLike,
} from '../../client/index.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

let stack: LocalStack;
let url: string;

beforeAll(async () => {
  stack = await startTestStack({ toolsDir: 'test/conformance/tools' });
  url = stack.url.href;
});
afterAll(async () => {
  await stack?.close();
});

const DIALECTS = ['tasks', 'tasks-2025-11-25', 'sep-1391'] as const;

describe.concurrent.each(DIALECTS)('dialect %s, forced', (dialect) => {
  it('starts without blocking and joins the result', async () => {
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(url, 'slow_compute', { seconds: 1, label: dialect }, { store, dialect });
    expect(handle).toMatchObject({ dialect, tool: 'slow_compute', url, remoteId: expect.any(String) });
    expect(JSON.parse(JSON.stringify(handle))).toEqual(handle);
    const seen: CallStatus[] = [];
    const result = await join(handle, { store, onStatus: (s) => seen.push(s) });
    expect(result?.structuredContent).toEqual({ seconds: 1, label: dialect });
    expect(seen.at(-1)).toMatchObject({ id: handle.id, state: 'completed', statusMessage: expect.any(String) });
  });

  it('a tool failure resolves with its isError result', async () => {
    const store = new MemoryRequestStateStore();
    const result = await join(await startToolCall(url, 'failing_job', {}, { store, dialect }), { store });
    expect(result).toMatchObject({ isError: true });
  });

  it('a protocol failure rejects with CallFailedError carrying the JSON-RPC code', async () => {
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(url, 'protocol_error_job', {}, { store, dialect });
    await expect(join(handle, { store })).rejects.toMatchObject({ name: 'CallFailedError', code: -32603 });
  });

  it('join with a timeout resolves undefined while the call runs; cancel ends it and a later join rejects as cancelled', async () => {
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(url, 'slow_compute', { seconds: 30, label: 'x' }, { store, dialect });
    const started = Date.now();
    await expect(join(handle, { store, timeoutMs: 300 })).resolves.toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await status(handle, { store })).toMatchObject({ state: 'working' });
    expect(await cancel(handle, { store })).toMatchObject({ id: handle.id, state: 'cancelled' });
    await expect(join(handle, { store })).rejects.toBeInstanceOf(CallCancelledError);
  });
});

describe('choosing how to call', () => {
  it('picks the Tasks extension when the server offers it', async () => {
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(url, 'slow_compute', { seconds: 0, label: 'auto' }, { store });
    expect(handle.dialect).toBe('tasks');
    await join(handle, { store });
  });

  it.each([undefined, 'tasks-2025-11-25', 'sep-1391'] as const)(
    'a sync-only tool is simply called (dialect %s): the handle holds its result',
    async (dialect) => {
      const store = new MemoryRequestStateStore();
      const handle = await startToolCall(url, 'greet', { name: 'Ada' }, { store, ...(dialect ? { dialect } : {}) });
      expect(handle.dialect).toBe('sync');
      expect((await join(handle.id, { store }))?.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
      expect((await list({ store }))[0]).toMatchObject({ handle: { id: handle.id }, result: { content: [{ text: 'Hello, Ada!' }] } });
    },
  );
});

describe('joining later', () => {
  it('a handle saved by one client is joined by id through a fresh file store, as another process would', async () => {
    const dir = await mkdtemp(joinPath(tmpdir(), 'async-mcp-client-'));
    try {
      const handle = await startToolCall(url, 'slow_compute', { seconds: 1, label: 'later' }, { store: new FileRequestStateStore(dir) });
      expect(await join(handle.id, { store: new FileRequestStateStore(dir), timeoutMs: 50 })).toBeUndefined();
      const result = await join(handle.id, { store: new FileRequestStateStore(dir) });
      expect(result?.structuredContent).toEqual({ seconds: 1, label: 'later' });
      // The result is kept with the handle: joining again needs no server.
      const offline: FetchLike = () => Promise.reject(new TypeError('offline'));
      expect(await join(handle.id, { store: new FileRequestStateStore(dir), fetch: offline })).toEqual(result);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('each bearer token is its own principal: another token cannot join the call, and a missing one is named', async () => {
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(url, 'slow_compute', { seconds: 0, label: 'mine' }, { store, auth: { token: 'alice' } });
    expect(handle.auth).toBe('bearer');
    expect(JSON.stringify(handle)).not.toContain('alice');
    await expect(join(handle, { store, auth: { token: 'mallory' } })).rejects.toMatchObject({ code: -32602 });
    await expect(join(handle, { store, auth: {} })).rejects.toThrow(/bearer token/);
    expect((await join(handle, { store, auth: { token: 'alice' } }))?.structuredContent).toEqual({ seconds: 0, label: 'mine' });
  });

  it('an aborted join rejects with the abort reason and leaves the call running', async () => {
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(url, 'slow_compute', { seconds: 30, label: 'x' }, { store, dialect: 'sep-1391' });
    await expect(join(handle, { store, signal: AbortSignal.timeout(200) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(await status(handle, { store })).toMatchObject({ state: 'working' });
    await cancel(handle, { store });
  });
});

it('CallFailedError and CallCancelledError are exported error classes', () => {
  expect(new CallFailedError('x', { code: 1 })).toMatchObject({ name: 'CallFailedError', code: 1 });
  expect(new CallCancelledError()).toBeInstanceOf(Error);
});
