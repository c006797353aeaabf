/**
 * Bounded inputs answer cleanly (issue 8 §4), on the local stack over raw HTTP: every
 * id is bounded before it reaches a key, oversized arguments and deep JSON are refused
 * before anything is written, and an oversized id reads exactly like an unknown one.
 * The stack serves one test tool that accepts any arguments and waits ten minutes.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyNotification, legacyRequest, modernRequest, postRaw, type RawResponse } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

const TOOL = 'hold_anything';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let stack: LocalStack;
let toolsDir: string;

beforeAll(async () => {
  toolsDir = await mkdtemp(join(tmpdir(), 'bounded-inputs-'));
  await mkdir(join(toolsDir, TOOL));
  await writeFile(
    join(toolsDir, TOOL, 'tool.json'),
    JSON.stringify({
      name: TOOL,
      description: 'Accepts any arguments and waits ten minutes.',
      inputSchema: { type: 'object' },
      invocation: 'both',
      workflowType: 'STANDARD',
    }),
  );
  await writeFile(
    join(toolsDir, TOOL, 'definition.asl.json'),
    JSON.stringify({ StartAt: 'Hold', TimeoutSeconds: 3600, States: { Hold: { Type: 'Wait', Seconds: 600, End: true } } }),
  );
  stack = await startTestStack({ toolsDir });
});
afterAll(async () => {
  await stack?.close();
  await rm(toolsDir, { recursive: true, force: true });
});

/** One principal's requests, so listings and request ids belong to this test alone. */
function principal() {
  const headers = { authorization: `Bearer ${randomUUID()}` };
  return {
    headers,
    legacy: (method: string, params: Record<string, unknown>, id?: number | string) =>
      legacyRequest(stack.url, method, params, { headers, ...(id === undefined ? {} : { id }) }),
    modern: (method: string, params: Record<string, unknown>) => modernRequest(stack.url, method, params, { headers, capabilities: TASKS }),
  };
}

/** The JSON-RPC error and HTTP status of an answer, for comparing two answers. */
function answer(response: RawResponse) {
  return { status: response.status, error: rpcError(response) };
}

const OVERSIZED = 'x'.repeat(3000);

describe('an oversized id answers -32602, the same as an unknown one', () => {
  it('a 2025-11-25 taskId, in tasks/get, tasks/result and tasks/cancel', async () => {
    const alice = principal();
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const unknown = answer(await alice.legacy(method, { taskId: 'no-such-task' }));
      expect(unknown.error.code, method).toBe(-32602);
      expect(answer(await alice.legacy(method, { taskId: OVERSIZED })), method).toEqual(unknown);
    }
  });

  it('a 2026-07-28 taskId, in tasks/get and tasks/cancel', async () => {
    const alice = principal();
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const unknown = answer(await alice.modern(method, { taskId: 'no-such-task' }));
      expect(unknown.error.code, method).toBe(-32602);
      expect(answer(await alice.modern(method, { taskId: OVERSIZED })), method).toEqual(unknown);
    }
  });

  it('a SEP-1391 token, in tools/async/status and tools/async/result', async () => {
    const alice = principal();
    for (const method of ['tools/async/status', 'tools/async/result']) {
      const unknown = answer(await alice.legacy(method, { token: 'no-such-token' }));
      expect(unknown.error).toEqual({ code: -32602, message: 'Failed to retrieve operation: Operation not found' });
      expect(answer(await alice.legacy(method, { token: OVERSIZED })), method).toEqual(unknown);
    }
  });

  it('a tasks/list cursor answers like an invalid one', async () => {
    const alice = principal();
    const invalid = answer(await alice.legacy('tasks/list', { cursor: 'not-a-cursor' }));
    expect(invalid.error).toMatchObject({ code: -32602, message: 'Invalid cursor' });
    expect(answer(await alice.legacy('tasks/list', { cursor: 'A'.repeat(5000) }))).toEqual(invalid);
  });
});

describe('a JSON-RPC id longer than 256 characters', () => {
  it('on a tools/call is refused with HTTP 400 and -32600, and leaves no record behind', async () => {
    const alice = principal();
    const token = `tok-${randomUUID()}`;
    const refused = await alice.legacy('tools/call', { name: TOOL, arguments: {}, operation: { token } }, 'i'.repeat(257));
    expect(refused.status).toBe(400);
    expect(rpcError(refused)).toEqual({ code: -32600, message: 'Invalid Request: a request id must be at most 256 characters' });
    expect(rpcError(await alice.legacy('tools/async/status', { token }))).toMatchObject({ code: -32602, message: expect.stringMatching(/not found/) });

    const task = await alice.legacy('tools/call', { name: TOOL, arguments: {}, task: {} }, 'i'.repeat(3000));
    expect(task.status).toBe(400);
    expect(ok(await alice.legacy('tasks/list', {})).tasks).toEqual([]);
  });

  it('of exactly 256 characters is served, and a cancel by that id finds its operation', async () => {
    const alice = principal();
    const token = `tok-${randomUUID()}`;
    const id = 'é'.repeat(256);
    ok(await alice.legacy('tools/call', { name: TOOL, arguments: {}, operation: { token } }, id));
    await legacyNotification(stack.url, 'notifications/cancelled', { requestId: id }, alice.headers);
    expect(ok(await alice.legacy('tools/async/status', { token })).status).toBe('canceled');
  });
});

describe('arguments past what StartExecution accepts', () => {
  it('are refused with -32602 naming the 256 KB limit, before anything is written', async () => {
    const alice = principal();
    const token = `tok-${randomUUID()}`;
    const blob = 'b'.repeat(300 * 1024);
    const refused = await alice.legacy('tools/call', { name: TOOL, arguments: { blob }, operation: { token } });
    expect(rpcError(refused)).toMatchObject({ code: -32602, message: expect.stringMatching(/256 KB/) });
    expect(rpcError(await alice.legacy('tools/async/status', { token })).message).toMatch(/not found/);
    expect(ok(await alice.legacy('tasks/list', {})).tasks).toEqual([]);
  });
});

describe('JSON nesting depth', () => {
  /** A tools/call whose arguments nest `depth` arrays; the message, params and arguments add three levels. */
  const deepCall = (depth: number, token: string) =>
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${TOOL}","operation":{"token":"${token}"},"arguments":{"deep":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
  const send = (body: string, headers: Record<string, string>) => postRaw(stack.url, body, { 'mcp-protocol-version': '2025-11-25', ...headers });

  it('up to 64 levels is served; one level more is refused with HTTP 400 and -32600 naming the bound', async () => {
    const alice = principal();
    const token = `tok-${randomUUID()}`;
    expect(ok(await send(deepCall(61, token), alice.headers)).operation.status).toBe('working');
    const refused = await send(deepCall(62, `tok-${randomUUID()}`), alice.headers);
    expect(refused.status).toBe(400);
    expect(rpcError(refused)).toEqual({ code: -32600, message: 'Invalid Request: JSON nested deeper than 64 levels' });
    await legacyNotification(stack.url, 'notifications/cancelled', { requestId: 1, _operation: { token } }, alice.headers);
  });

  it('a hostile megabyte of open brackets is refused at once, and the server goes on serving', async () => {
    const started = performance.now();
    const refused = await postRaw(stack.url, '['.repeat(1024 * 1024 - 1), { 'mcp-protocol-version': '2025-11-25' });
    expect(refused.status).toBe(400);
    expect(rpcError(refused).code).toBe(-32600);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(ok(await legacyRequest(stack.url, 'tools/list')).tools).toHaveLength(1);
  });
});
