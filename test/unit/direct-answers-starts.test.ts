/**
 * A plain async start the edge answers without an SDK server (edge/direct-answer.ts) is the
 * answer the SDK path gives, for each start kind: a 2025-11-25 task (`params.task`), a
 * 2026-07-28 task (Tasks extension) and a SEP-1391 operation (`params.operation`). Successes
 * and the errors of a start that has begun (a reused token, the active-operations limit, an
 * engine that does not start) are compared byte for byte, minted ids made alike (an
 * initialize-era start goes out on an SSE stream of one event, as the SDK frames it); everything
 * else goes to the SDK before anything is written. A start that has begun is never served
 * twice: a failed one leaves one operation, not two.
 */
import { Server } from '@modelcontextprotocol/server';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-limits.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { modernAppRequest } from '../support/modern-app-request.ts';
import { jsonRpcMessagesOf } from '../support/raw-mcp.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'parity', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': TASKS,
};
const SEP_META = { 'io.modelcontextprotocol/clientCapabilities': { experimental: { longRunningOperations: {} } } };

const CATALOG = () =>
  createToolCatalog([
    testTool({ name: 'analyze' }),
    testTool({ name: 'ask-first', timing: { ...testTool({ name: 'x' }).timing, askBeforeTaskSeconds: 1 } }),
    testTool({ name: 'quick', invocation: 'sync', workflowType: 'EXPRESS' }),
    testTool({ name: 'strict', inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }),
  ]);

/** One app over its own store and engine, its task ids minted in a fixed sequence. */
function appOf(answerDirectly: boolean, maxActiveOperations = DEFAULT_LIMITS.maxActiveOperations) {
  const store = new InMemoryRecordStore();
  const engine = new FakeWorkflowEngine();
  const app = createAsyncMcpApp({
    store,
    engine,
    catalog: CATALOG(),
    secretKey: TEST_SECRET_KEY,
    limits: { ...DEFAULT_LIMITS, maxActiveOperations },
    logger: { error: () => undefined, warn: () => undefined },
    answerDirectly,
  });
  let minted = 0;
  vi.spyOn(app.operations, 'mintToken').mockImplementation(() => `task-${++minted}`);
  const creates = vi.spyOn(store, 'create');
  return { app, store, engine, creates };
}

type Stack = ReturnType<typeof appOf>;

/** The same server twice: one answering plain starts itself, one serving every request through the SDK. */
function pair(maxActiveOperations?: number) {
  return { direct: appOf(true, maxActiveOperations), viaSdk: appOf(false, maxActiveOperations) };
}

function legacyRequest(body: unknown): Request {
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LEGACY },
    body: JSON.stringify(body),
  });
}

interface Answered {
  status: number;
  contentType: string | null;
  retryAfter: string | null;
  body: string;
}

async function send(stack: Stack, body: unknown, era: 'modern' | 'legacy'): Promise<Answered> {
  const response = await stack.app.fetch(era === 'modern' ? modernAppRequest(body) : legacyRequest(body), 'alice');
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
    body: await response.text(),
  };
}

/** The one JSON-RPC response in a body: the body itself, or the data of its one SSE event. */
function messageOf(answered: Answered): { result?: Record<string, unknown>; error?: { code: number; message: string } } {
  const [message, ...more] = jsonRpcMessagesOf(answered.body);
  expect(more, answered.body).toEqual([]);
  return message;
}

/** How many SDK servers were connected: none for a request the edge answered itself. */
function sdkServers() {
  const connect = vi.spyOn(Server.prototype, 'connect');
  return { count: () => connect.mock.calls.length, reset: () => connect.mockClear() };
}

/**
 * Sends `body` to both apps and expects the same answer, byte for byte: status, content type,
 * Retry-After and body (an initialize-era call on an SSE stream, as the SDK frames it). The
 * edge answered it without an SDK server. Returns the JSON-RPC response.
 */
async function sameStart(label: string, { direct, viaSdk }: ReturnType<typeof pair>, body: unknown, era: 'modern' | 'legacy') {
  const servers = sdkServers();
  servers.reset();
  const ours = await send(direct, body, era);
  expect(servers.count(), `${label}: the edge answered it`).toBe(0);
  servers.reset();
  const sdk = await send(viaSdk, body, era);
  expect(servers.count(), `${label}: the SDK answered it`).toBeGreaterThan(0);
  expect(ours, label).toEqual(sdk);
  return messageOf(ours);
}

const modernStart = (id: string | number = 1, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'analyze', arguments: {}, _meta: ENVELOPE, ...params },
});
const legacyTaskStart = (id: string | number = 1, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'analyze', arguments: {}, task: { ttl: 120_000 }, ...params },
});
const sepStart = (token: string, id: string | number = 1, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'analyze', arguments: {}, operation: { token, keepAlive: 300 }, _meta: SEP_META, ...params },
});

const KINDS = [
  ['a 2025-11-25 task', 'legacy', (id: string | number, params?: Record<string, unknown>) => legacyTaskStart(id, params)],
  ['a 2026-07-28 task', 'modern', (id: string | number, params?: Record<string, unknown>) => modernStart(id, params)],
  ['a SEP-1391 operation', 'legacy', (id: string | number, params?: Record<string, unknown>) => sepStart(`op-${id}`, id, params)],
] as const;

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('a plain async start answered by the edge', () => {
  beforeEach(() => {
    // Both apps stamp the same times on what they create.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-08-01T10:00:00Z'));
  });

  it.each(KINDS)('%s: answers what the SDK answers, without an SDK server', async (_, era, start) => {
    const apps = pair();
    const answered = await sameStart('a number id', apps, start(1), era);
    expect(answered.result, JSON.stringify(answered)).toBeDefined();
    await sameStart('a string id', apps, start('req-2'), era);
    expect(apps.direct.creates).toHaveBeenCalledTimes(2);
    expect(apps.direct.engine.startCalls).toBe(2);
  });

  it('a SEP-1391 token reused for a different call: the same -32602, worded as the SDK words it', async () => {
    const apps = pair();
    await sameStart('first call', apps, sepStart('op-shared', 1), 'legacy');
    const reused = await sameStart('reused', apps, sepStart('op-shared', 2, { arguments: { other: true } }), 'legacy');
    expect(reused.error).toEqual({ code: -32602, message: 'Invalid operation.token: token already used for a different tool call' });
  });

  it.each(KINDS)("%s past the principal's active-operations limit: the same -32029 with HTTP 429 and Retry-After", async (_, era, start) => {
    const apps = pair(1);
    await sameStart('within the limit', apps, start(1), era);
    const refused = await sameStart('past the limit', apps, start(2), era);
    expect(refused.error?.code).toBe(-32029);
  });

  it.each(KINDS)('%s whose workflow engine fails to start: the same -32603', async (_, era, start) => {
    const apps = pair();
    for (const { engine } of [apps.direct, apps.viaSdk]) engine.failStartWith = new Error('engine unavailable');
    const failed = await sameStart('engine down', apps, start(1), era);
    expect(failed.error?.code).toBe(-32603);
  });

  it.each(KINDS)(
    '%s whose engine fails after the record was written creates exactly one operation (never started again through the SDK)',
    async (_, era, start) => {
      const { direct } = pair();
      direct.engine.failStartWith = new Error('engine unavailable');
      const servers = sdkServers();
      const answered = await send(direct, start(1), era);
      expect(direct.creates).toHaveBeenCalledTimes(1);
      expect(direct.engine.startCalls).toBe(1);
      expect(messageOf(answered).error?.code).toBe(-32603);
      expect(servers.count()).toBe(0);
    },
  );
});

describe('a tools/call that is no plain start goes to the SDK, before anything is written', () => {
  const cases: Array<[string, 'modern' | 'legacy', unknown]> = [
    ['a tool that asks before its task exists (2026-07-28)', 'modern', modernStart(1, { name: 'ask-first' })],
    ['a retry with requestState (2026-07-28)', 'modern', modernStart(1, { requestState: 'forged' })],
    ['a retry with inputResponses (2026-07-28)', 'modern', modernStart(1, { inputResponses: {} })],
    ['a sync tool (2026-07-28, answered by waiting)', 'modern', modernStart(1, { name: 'quick' })],
    ['an unknown tool', 'modern', modernStart(1, { name: 'no-such-tool' })],
    ['invalid arguments', 'modern', modernStart(1, { name: 'strict', arguments: { n: 'x' } })],
    [
      'a client without the Tasks extension (a handle tool call)',
      'modern',
      modernStart(1, { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': {} } }),
    ],
    ['a sync tool with params.task (-32601)', 'legacy', legacyTaskStart(1, { name: 'quick' })],
    ['an invalid params.task', 'legacy', legacyTaskStart(1, { task: { ttl: -1 } })],
    ['an empty operation token', 'legacy', sepStart('', 1)],
    ['a sync tool with params.operation', 'legacy', sepStart('op-quick', 1, { name: 'quick' })],
    [
      'a call without task or operation (a handle tool call)',
      'legacy',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'analyze', arguments: {} } },
    ],
    ['a built-in handle tool', 'legacy', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'operation_list', arguments: {} } }],
    ['a progress token in _meta', 'legacy', legacyTaskStart(1, { _meta: { progressToken: 7 } })],
    ['a params member beyond the call', 'legacy', legacyTaskStart(1, { extra: 1 })],
  ];

  it.each(cases)('%s', async (_, era, body) => {
    const { direct, viaSdk } = pair();
    const servers = sdkServers();
    const ours = await send(direct, body, era);
    const builtForOurs = servers.count();
    servers.reset();
    const sdk = await send(viaSdk, body, era);
    // Each app stamps its own times on what it creates, and ids minted outside `mintToken` (a round's, a handle's) are random.
    const alike = (answered: Answered) => ({
      ...answered,
      body: answered.body.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>').replace(/\b[\w-]{22}\b/g, '<id>'),
    });
    expect(alike(ours)).toEqual(alike(sdk));
    expect(builtForOurs).toBe(servers.count());
    expect(builtForOurs).toBeGreaterThan(0);
    expect(direct.creates.mock.calls.length).toBe(viaSdk.creates.mock.calls.length);
  });
});
