/**
 * A 2026-07-28 `tasks/get` the edge answers without an SDK server (edge/direct-answer.ts) is
 * the answer the SDK's modern path gives, byte for byte: status, content type and body, for a
 * task at work, with progress, asking for input, completed, failed and cancelled, for string
 * and number ids. What the edge does not vouch for, or what ends in an error (another
 * principal's task, an unknown one, a client that does not declare the extension, a header
 * that disagrees with the body, an envelope with more members), goes through the SDK, so
 * those answers are the SDK's own.
 */
import { Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { withOperations } from '../../lambdas/workers/built-in-scope.ts';
import { createReportProgressHandler } from '../../lambdas/workers/report-progress-worker.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { modernAppRequest } from '../support/modern-app-request.ts';
import { jsonRpcMessagesOf } from '../support/raw-mcp.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const REVISION = '2026-07-28';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientInfo': { name: 'parity', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': TASKS,
};

function stack() {
  const store = new InMemoryRecordStore();
  const engine = new FakeWorkflowEngine();
  const options = {
    store,
    engine,
    catalog: createToolCatalog([testTool({ name: 'analyze' })]),
    secretKey: TEST_SECRET_KEY,
    logger: { error: () => undefined, warn: () => undefined },
  };
  const direct = createAsyncMcpApp(options);
  const viaSdk = createAsyncMcpApp({ ...options, answerDirectly: false });
  return { store, engine, direct, viaSdk };
}

type App = ReturnType<typeof stack>['direct'];

/** `modernAppRequest` without the headers named in `omit`. */
function requestWithout(body: unknown, headers: Record<string, string> | undefined, omit: readonly string[]): Request {
  const sent = modernAppRequest(body, headers);
  const kept = new Headers(sent.headers);
  for (const name of omit) kept.delete(name);
  return new Request(sent.url, { method: 'POST', headers: kept, body: JSON.stringify(body) });
}

async function answer(app: App, body: unknown, headers?: Record<string, string>, principal = 'alice', omit: readonly string[] = []) {
  const response = await app.fetch(requestWithout(body, headers, omit), principal);
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

/** A task started by a client declaring `capabilities` (elicitation, for a run that asks). */
async function startTask(app: App, capabilities: Record<string, unknown> = TASKS): Promise<string> {
  const _meta = { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': capabilities };
  const started = await answer(app, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'analyze', arguments: {}, _meta } });
  const taskId = (JSON.parse(started.body) as { result?: { taskId: string } }).result?.taskId;
  expect(typeof taskId, started.body).toBe('string');
  return taskId as string;
}

const tasksGet = (taskId: string, id: string | number = 7, meta: Record<string, unknown> = ENVELOPE) => ({
  jsonrpc: '2.0',
  id,
  method: 'tasks/get',
  params: { taskId, _meta: meta },
});

/** How many SDK servers a request connected: none when the edge answered it itself. */
function sdkServers() {
  const connect = vi.spyOn(Server.prototype, 'connect');
  return { count: () => connect.mock.calls.length, reset: () => connect.mockClear() };
}

afterEach(() => vi.restoreAllMocks());

type Answered = { status: number; contentType: string | null; body: string };

/**
 * `same(label, body)`: the answer of the app that answers directly, which built no SDK server,
 * equals the SDK's (which built one), a success; its parsed body.
 */
function answeredAlike(send: (app: App, body: unknown) => Promise<Answered>, direct: App, viaSdk: App) {
  const servers = sdkServers();
  return async (label: string, body: unknown) => {
    servers.reset();
    const ours = await send(direct, body);
    expect(servers.count(), `${label}: the edge answered it`).toBe(0);
    const sdk = await send(viaSdk, body);
    expect(servers.count(), `${label}: the SDK answered it`).toBeGreaterThan(0);
    expect(ours, label).toEqual(sdk);
    expect(ours.status, label).toBe(200);
    return JSON.parse(ours.body) as { result: Record<string, unknown> };
  };
}

/** The run of `record` asks its client to confirm (an open elicitation). */
async function askConfirm(app: App, record: { ownerId: string; token: string; executionName: string }): Promise<void> {
  await app.operations.inputs.ask({
    operation: { ownerId: record.ownerId, token: record.token },
    executionName: record.executionName,
    key: 'confirm',
    request: { method: 'elicitation/create', params: { message: 'Go?', requestedSchema: { type: 'object', properties: {} } } },
    taskToken: 'tok-confirm',
    concurrent: false,
  });
}

describe('a 2026-07-28 tasks/get answered by the edge', () => {
  it('answers what the SDK answers, without an SDK server, in every state of a task', async () => {
    const { store, engine, direct, viaSdk } = stack();
    const same = answeredAlike(answer, direct, viaSdk);

    const working = await startTask(direct);
    expect((await same('working', tasksGet(working))).result.status).toBe('working');
    expect((await same('a string id', tasksGet(working, 'req-1'))).result.status).toBe('working');
    await same('a client without clientInfo', tasksGet(working, 8, { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': undefined }));

    const ownerId = ownerIdFor('alice');
    const progressed = await store.get({ ownerId, token: working });
    const report = createReportProgressHandler(() => direct.operations, { error: () => undefined, warn: () => undefined });
    await withOperations(direct.operations, () =>
      report({ executionName: progressed!.executionName, operation: { ownerId, token: working }, progress: 3, total: 8, message: 'rows' }),
    );
    const withProgress = await same('with progress', tasksGet(working));
    expect(withProgress.result._meta).toEqual(expect.objectContaining({ 'io.modelcontextprotocol/serverInfo': expect.anything() }));
    expect(Object.keys(withProgress.result._meta as object)).toHaveLength(2);

    const asking = await startTask(direct, { ...TASKS, elicitation: {} });
    const askingRecord = (await store.get({ ownerId, token: asking }))!;
    await askConfirm(direct, askingRecord);
    expect((await same('asking for input', tasksGet(asking))).result.status).toBe('input_required');

    const completed = await startTask(direct);
    const completedRecord = (await store.get({ ownerId, token: completed }))!;
    await direct.operations.applyExecution(completedRecord, engine.finish(completedRecord.executionArn!, { status: 'SUCCEEDED', output: { mean: 4 } }));
    expect((await same('completed', tasksGet(completed))).result.status).toBe('completed');

    const failed = await startTask(direct);
    const failedRecord = (await store.get({ ownerId, token: failed }))!;
    await direct.operations.applyExecution(
      failedRecord,
      engine.finish(failedRecord.executionArn!, { status: 'FAILED', error: 'RangeError', cause: 'too big' }),
    );
    // A run that fails is a tool call's error result: the task completed (the extension's words).
    expect((await same('failed', tasksGet(failed))).result).toMatchObject({ status: 'completed', result: { isError: true } });

    const cancelled = await startTask(direct);
    await direct.operations.cancel({ ownerId, token: cancelled }, 'Cancelled by tasks/cancel');
    expect((await same('cancelled', tasksGet(cancelled))).result.status).toBe('cancelled');
  });

  it.each([
    ["another principal's task", { principal: 'mallory' }],
    ['an unknown task', { taskId: 'no-such-task' }],
    ['a client that does not declare the extension', { meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': {} } }],
    ['an envelope with a log level', { meta: { ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'debug' } }],
    ['capabilities beyond extensions', { meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { ...TASKS, elicitation: {} } } }],
    ['an Mcp-Name header naming another task', { headers: { 'mcp-name': 'other-task' } }],
    ['no Mcp-Name header (refused with -32020)', { omit: ['mcp-name'] }],
    ['an Mcp-Method header naming another method', { headers: { 'mcp-method': 'tasks/cancel' } }],
    ['another protocol version header', { headers: { 'mcp-protocol-version': '2025-11-25' } }],
    ['an empty task id', { taskId: '' }],
    ['a retry with inputResponses', { extra: { inputResponses: {} } }],
  ])(
    '%s: the SDK answers, as it would anyway',
    async (_, change: {
      principal?: string;
      taskId?: string;
      meta?: Record<string, unknown>;
      headers?: Record<string, string>;
      extra?: Record<string, unknown>;
      omit?: string[];
    }) => {
      const { direct, viaSdk } = stack();
      const taskId = await startTask(direct);
      const body = tasksGet(change.taskId ?? taskId, 7, change.meta);
      Object.assign(body.params, change.extra);
      const servers = sdkServers();
      const ours = await answer(direct, body, change.headers, change.principal, change.omit);
      const builtForOurs = servers.count();
      servers.reset();
      expect(ours).toEqual(await answer(viaSdk, body, change.headers, change.principal, change.omit));
      // The SDK served it as it serves it without the edge's answers: as many servers (none for a refusal it makes first).
      expect(builtForOurs).toBe(servers.count());
    },
  );
});

const LEGACY = '2025-11-25';

function legacyRequest(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LEGACY, ...headers },
    body: JSON.stringify(body),
  });
}

async function legacyAnswer(app: App, body: unknown, headers?: Record<string, string>, principal = 'alice') {
  const response = await app.fetch(legacyRequest(body, headers), principal);
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

const SEP_CAPABILITIES = { experimental: { longRunningOperations: {} }, elicitation: {} };

/** A 2025-11-25 task (`params.task`) and a SEP-1391 operation (`params.operation`), started by the app. */
async function startLegacy(app: App): Promise<{ task: string; operation: string }> {
  const task = await legacyAnswer(app, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'analyze', arguments: {}, task: {} } });
  const operation = `op-${Math.random().toString(36).slice(2)}`;
  const started = await legacyAnswer(app, {
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'analyze', arguments: {}, operation: { token: operation }, _meta: { 'io.modelcontextprotocol/clientCapabilities': SEP_CAPABILITIES } },
  });
  expect(started.status, started.body).toBe(200);
  const [message] = jsonRpcMessagesOf(task.body) as Array<{ result?: { task?: { taskId?: string } } }>;
  const taskId = message?.result?.task?.taskId;
  expect(typeof taskId, task.body).toBe('string');
  return { task: taskId as string, operation };
}

const legacyGet = (taskId: string, id: string | number = 7) => ({ jsonrpc: '2.0', id, method: 'tasks/get', params: { taskId } });
const sepStatus = (token: string, id: string | number = 7) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/async/status',
  params: { token, _meta: { 'io.modelcontextprotocol/clientCapabilities': SEP_CAPABILITIES } },
});

describe('an initialize-era poll answered by the edge (2025-11-25 tasks/get, SEP-1391 tools/async/status)', () => {
  it('answers what the SDK answers, without an SDK server, as a task runs, reports progress, completes or fails', async () => {
    const { store, engine, direct, viaSdk } = stack();
    const same = answeredAlike(legacyAnswer, direct, viaSdk);
    const ownerId = ownerIdFor('alice');
    const running = await startLegacy(direct);
    expect((await same('tasks/get, working', legacyGet(running.task))).result.status).toBe('working');
    expect((await same('tasks/get, a string id', legacyGet(running.task, 'r-1'))).result.status).toBe('working');
    expect((await same('status, working', sepStatus(running.operation))).result.status).toBe('working');

    const report = createReportProgressHandler(() => direct.operations, { error: () => undefined, warn: () => undefined });
    for (const token of [running.task, running.operation]) {
      const record = (await store.get({ ownerId, token }))!;
      await withOperations(direct.operations, () => report({ executionName: record.executionName, operation: { ownerId, token }, progress: 2, total: 5 }));
    }
    await same('tasks/get, with progress', legacyGet(running.task));
    expect((await same('status, with progress', sepStatus(running.operation))).result.progress).toBeDefined();

    const finished = await startLegacy(direct);
    for (const [token, status] of [
      [finished.task, 'SUCCEEDED'],
      [finished.operation, 'FAILED'],
    ] as const) {
      const record = (await store.get({ ownerId, token }))!;
      await direct.operations.applyExecution(
        record,
        engine.finish(record.executionArn!, status === 'SUCCEEDED' ? { status, output: { mean: 4 } } : { status, error: 'RangeError', cause: 'too big' }),
      );
    }
    expect((await same('tasks/get, completed', legacyGet(finished.task))).result.status).toBe('completed');
    expect((await same('status, failed', sepStatus(finished.operation))).result.status).toBe('failed');

    const cancelled = await startLegacy(direct);
    await direct.operations.cancel({ ownerId, token: cancelled.task }, 'Cancelled by tasks/cancel');
    expect((await same('tasks/get, cancelled', legacyGet(cancelled.task))).result.status).toBe('cancelled');
  });

  it.each([
    ["another principal's task", (ids: { task: string }) => ({ body: legacyGet(ids.task), principal: 'mallory' })],
    ['an unknown operation', () => ({ body: sepStatus('no-such-operation') })],
    ['a status with an open question (it goes out first, on an SSE stream)', (ids: { operation: string }) => ({ body: sepStatus(ids.operation), ask: true })],
    ['a client that accepts JSON only', (ids: { task: string }) => ({ body: legacyGet(ids.task), headers: { accept: 'application/json' } })],
    ['a protocol version the SDK does not know', (ids: { task: string }) => ({ body: legacyGet(ids.task), headers: { 'mcp-protocol-version': '2099-01-01' } })],
    ['a progress token in _meta', (ids: { task: string }) => ({ body: { ...legacyGet(ids.task), params: { taskId: ids.task, _meta: { progressToken: 3 } } } })],
    ['a fractional id', (ids: { task: string }) => ({ body: legacyGet(ids.task, 1.5) })],
  ])(
    '%s: the SDK answers, as it would anyway',
    async (_, make: (ids: { task: string; operation: string }) => { body: unknown; principal?: string; headers?: Record<string, string>; ask?: boolean }) => {
      const { store, direct, viaSdk } = stack();
      const ids = await startLegacy(direct);
      const change = make(ids);
      if (change.ask) {
        const record = (await store.get({ ownerId: ownerIdFor('alice'), token: ids.operation }))!;
        await askConfirm(direct, record);
      }
      const servers = sdkServers();
      const ours = await legacyAnswer(direct, change.body, change.headers, change.principal);
      const builtForOurs = servers.count();
      servers.reset();
      expect(ours).toEqual(await legacyAnswer(viaSdk, change.body, change.headers, change.principal));
      expect(builtForOurs).toBe(servers.count());
    },
  );
});
