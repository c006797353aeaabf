/**
 * Handle tools over the real MCP edge and core, on in-memory ports: what a client that
 * declares no async support sees and gets, and that no async-capable client ever sees
 * them. Executions finish when a test says so.
 */
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAsyncMcpApp, type AsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import type { OperationsLimits } from '../../lambdas/operations/operations-service.ts';
import type { ExecutionSnapshot } from '../../lambdas/operations/ports.ts';
import { createToolCatalog, type ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { serveFetch, type NodeHttpServer } from '../../local/node-http-server.ts';
import { TEST_LIMITS } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { legacyRequest, modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const OLD = '2025-06-18';
const BUILT_INS = ['operation_cancel', 'operation_list', 'operation_result', 'operation_status'];
const OUTPUT = { type: 'object', properties: { passed: { type: 'integer' } }, required: ['passed'] };
const TOOLS: ToolSpec[] = [
  testTool({ name: 'job', outputSchema: OUTPUT }),
  testTool({
    name: 'suite',
    invocation: 'both',
    outputSchema: { $defs: { n: { type: 'integer' } }, type: 'object', properties: { passed: { $ref: '#/$defs/n' } } },
  }),
  testTool({ name: 'quick', invocation: 'both', workflowType: 'EXPRESS' }),
  testTool({ name: 'calc', invocation: 'sync', workflowType: 'EXPRESS' }),
];
const LIMITS: OperationsLimits = { ...TEST_LIMITS, maxBlockingSeconds: 1, maxActiveOperations: 1000 };

interface Served {
  app: AsyncMcpApp;
  engine: FakeWorkflowEngine;
  server: NodeHttpServer;
}

async function serve(options: { handleTools?: boolean; limits?: OperationsLimits; tools?: ToolSpec[] } = {}): Promise<Served> {
  const engine = new FakeWorkflowEngine();
  const app = createAsyncMcpApp({
    store: new InMemoryRecordStore(),
    engine,
    catalog: createToolCatalog(options.tools ?? TOOLS),
    secretKey: TEST_SECRET_KEY,
    limits: options.limits ?? LIMITS,
    logger: { error: () => undefined, warn: () => undefined },
    ...(options.handleTools === undefined ? {} : { handleTools: options.handleTools }),
  });
  // Each bearer token is its own principal, as in the local stack.
  const server = await serveFetch((request) => app.fetch(request, request.headers.get('authorization') ?? 'anonymous'), {
    host: '127.0.0.1',
    port: 0,
    path: '/mcp',
  });
  return { app, engine, server };
}

let on: Served;
beforeAll(async () => {
  on = await serve({ handleTools: true });
});
afterAll(async () => {
  await on.server.close();
});

const as = (principal: string): CallOptions => ({ headers: { authorization: principal } });
/** A client on a revision before tasks, declaring nothing. */
const plain = (method: string, params: Record<string, unknown> = {}, options: CallOptions = {}) =>
  legacyRequest(on.server.url, method, params, { version: OLD, ...options });
const call = (name: string, args: Record<string, unknown>, options?: CallOptions) => plain('tools/call', { name, arguments: args }, options);
const listNames = async (response: Promise<Awaited<ReturnType<typeof plain>>>) =>
  (ok(await response).tools as Array<{ name: string }>).map((t) => t.name).sort();

async function startJob(options?: CallOptions): Promise<string> {
  const started = ok(await call('job', { n: 1 }, options));
  return started.structuredContent.operationId as string;
}

/** Ends an execution the way status-sync would record it. */
async function finish(operationId: string, principal: string, result: Partial<ExecutionSnapshot> & Pick<ExecutionSnapshot, 'status'>) {
  const key = { ownerId: ownerIdFor(principal), token: operationId };
  const record = await on.app.operations.readCurrent(key);
  await on.app.operations.applyExecution(key, on.engine.finish(record.executionArn!, result));
}

describe('who sees handle tools', () => {
  it('is on by default for the library too, as in the Lambda and the local stack', async () => {
    const byDefault = await serve();
    try {
      expect(await listNames(legacyRequest(byDefault.server.url, 'tools/list', {}, { version: OLD }))).toEqual(['calc', 'job', ...BUILT_INS, 'quick', 'suite']);
    } finally {
      await byDefault.server.close();
    }
  });

  it('handleTools: false turns it off: a client without async support sees neither the built-ins nor async-only tools', async () => {
    const off = await serve({ handleTools: false });
    try {
      expect(await listNames(legacyRequest(off.server.url, 'tools/list', {}, { version: OLD }))).toEqual(['calc', 'quick', 'suite']);
      expect(rpcError(await legacyRequest(off.server.url, 'tools/call', { name: 'operation_list', arguments: {} }, { version: OLD })).message).toMatch(
        /Unknown tool/,
      );
    } finally {
      await off.server.close();
    }
  });

  it('a client that declares no async support sees every tool plus the four built-ins', async () => {
    for (const response of [
      plain('tools/list'),
      legacyRequest(on.server.url, 'tools/list', {}, { version: '2025-03-26' }),
      modernRequest(on.server.url, 'tools/list'),
    ]) {
      expect(await listNames(response)).toEqual(['calc', 'job', ...BUILT_INS, 'quick', 'suite']);
    }
  });

  it('clients that speak any async dialect never see the built-in tools, and cannot call them', async () => {
    const lro = { experimental: { longRunningOperations: {} } };
    const tasks = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const asyncClients: Array<(method: string, params: Record<string, unknown>) => ReturnType<typeof plain>> = [
      (m, p) => legacyRequest(on.server.url, m, p), // 2025-11-25: tasks implied by the revision
      (m, p) => legacyRequest(on.server.url, m, p, { version: OLD, capabilities: lro }),
      (m, p) => modernRequest(on.server.url, m, p, { capabilities: tasks }),
      (m, p) => modernRequest(on.server.url, m, p, { capabilities: lro }),
    ];
    for (const client of asyncClients) {
      const names = await listNames(client('tools/list', {}));
      for (const builtIn of BUILT_INS) expect(names).not.toContain(builtIn);
      expect(rpcError(await client('tools/call', { name: 'operation_list', arguments: {} })).message).toBe('Unknown tool: operation_list');
    }
  });

  it('lists the built-ins with input and output schemas, and says how long-running tools answer', async () => {
    const tools = ok(await plain('tools/list')).tools as Array<Record<string, unknown>>;
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.operation_result.inputSchema).toMatchObject({ required: ['operationId'], properties: { waitSeconds: { maximum: 50 } } });
    // operation_result answers with the called tool's own result, so it declares no schema of its own.
    expect(byName.operation_result.outputSchema).toBeUndefined();
    for (const name of ['operation_status', 'operation_cancel']) {
      expect(byName[name].outputSchema.required).toEqual(['operationId', 'status', 'pollAfterSeconds']);
    }
    expect(byName.operation_list.outputSchema.required).toEqual(['operations']);
    // An async-only tool runs up to its sync bound like a hybrid one, so it too answers either way.
    expect(byName.job.description).toMatch(/longer than 1 seconds, the call returns an operationId.*operation_result/s);
    expect(byName.job.outputSchema).toMatchObject({ anyOf: [OUTPUT, { required: ['operationId', 'status', 'pollAfterSeconds'] }] });
    // A hybrid tool answers either way; its $defs stay at the root, where its $ref points.
    expect(byName.suite.outputSchema).toMatchObject({
      $defs: { n: { type: 'integer' } },
      anyOf: [{ properties: { passed: { $ref: '#/$defs/n' } } }, { required: ['operationId', 'status', 'pollAfterSeconds'] }],
    });
    expect(byName.suite.description).toMatch(/longer than 1 seconds/);
    expect(byName.calc).not.toHaveProperty('outputSchema');
  });

  it('refuses to build a server whose catalog has a tool named like a built-in', () => {
    expect(() =>
      createAsyncMcpApp({
        store: new InMemoryRecordStore(),
        engine: new FakeWorkflowEngine(),
        catalog: createToolCatalog([testTool({ name: 'operation_status' })]),
        handleTools: true,
        secretKey: TEST_SECRET_KEY,
      }),
    ).toThrow(/operation_status has the name of a built-in handle tool/);
  });
});

describe('calling long-running tools', () => {
  it('an async-only tool returns at once with an operationId, its status and when to poll, and says what to call next', async () => {
    const result = ok(await call('job', { n: 1 }));
    expect(result.structuredContent).toEqual({ operationId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), status: 'working', pollAfterSeconds: 5 });
    const id = result.structuredContent.operationId;
    expect(result.content[0].text).toContain(`Call operation_result with operationId "${id}"`);
    expect(result.isError).toBeUndefined();
    expect(await on.app.operations.readCurrent({ ownerId: ownerIdFor('anonymous'), token: id })).toMatchObject({ dialect: 'handle', status: 'working' });
  });

  it('validates the tool arguments like any call', async () => {
    expect(rpcError(await plain('tools/call', { name: 'job', arguments: 'x' })).code).toBe(-32602);
  });

  it('a hybrid tool still running at its sync bound is handed off, not stopped', async () => {
    const result = ok(await call('suite', {}));
    expect(result.structuredContent).toMatchObject({ status: 'working', pollAfterSeconds: 5 });
    expect(result.content[0].text).toMatch(/did not finish within 1 seconds and continues in the background/);
    const record = await on.app.operations.readCurrent({ ownerId: ownerIdFor('anonymous'), token: result.structuredContent.operationId });
    expect(on.engine.executions.get(record.executionArn!)!.status).toBe('RUNNING');
  });

  it('a hybrid EXPRESS tool, which cannot be handed off, and a sync tool run as before', async () => {
    expect(ok(await call('quick', { a: 1 })).structuredContent).toEqual({ echo: expect.objectContaining({ arguments: { a: 1 } }) });
    expect(ok(await call('calc', { a: 2 })).structuredContent).toEqual({ echo: expect.objectContaining({ arguments: { a: 2 } }) });
  });

  it('the per-principal active-operation limit applies', async () => {
    const tight = await serve({ handleTools: true, limits: { ...LIMITS, maxActiveOperations: 1 } });
    try {
      const first = legacyRequest(tight.server.url, 'tools/call', { name: 'job', arguments: {} }, { version: OLD });
      ok(await first);
      const second = await legacyRequest(tight.server.url, 'tools/call', { name: 'job', arguments: {} }, { version: OLD });
      expect(rpcError(second).code).toBe(-32029);
    } finally {
      await tight.server.close();
    }
  });
});

describe('the built-in tools', () => {
  it('operation_status returns operationId, status, statusMessage and pollAfterSeconds', async () => {
    const id = await startJob();
    const result = ok(await call('operation_status', { operationId: id }));
    expect(result.structuredContent).toEqual({ operationId: id, status: 'working', statusMessage: 'The operation is running.', pollAfterSeconds: 5 });
    expect(result.content[0].text).toContain('operation_result');
  });

  it('operation_result returns the status while the operation runs, waiting at most the server bound', async () => {
    const id = await startJob();
    const startedAt = Date.now();
    const result = ok(await call('operation_result', { operationId: id, waitSeconds: 50 }));
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(result.structuredContent).toMatchObject({ operationId: id, status: 'working' });
    expect(result.isError).toBeUndefined();
  });

  it("operation_result returns the tool's own result once it has finished", async () => {
    const id = await startJob();
    await finish(id, 'anonymous', { status: 'SUCCEEDED', output: { passed: 7 } });
    expect(ok(await call('operation_result', { operationId: id }))).toEqual({
      content: [{ type: 'text', text: '{"passed":7}' }],
      structuredContent: { passed: 7 },
    });
  });

  it('operation_result waits for an operation that finishes within waitSeconds', async () => {
    const id = await startJob();
    const pending = call('operation_result', { operationId: id, waitSeconds: 1 });
    setTimeout(() => void finish(id, 'anonymous', { status: 'SUCCEEDED', output: { passed: 1 } }), 200);
    expect(ok(await pending).structuredContent).toEqual({ passed: 1 });
  });

  it('operation_result returns a tool failure as isError, and a protocol-error outcome as its JSON-RPC error', async () => {
    const failed = await startJob();
    await finish(failed, 'anonymous', { status: 'FAILED', error: 'Boom', cause: 'it broke' });
    expect(ok(await call('operation_result', { operationId: failed }))).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining('Error: Boom') }],
    });

    const refused = await startJob();
    await finish(refused, 'anonymous', { status: 'FAILED', error: 'Mcp.ProtocolError', cause: JSON.stringify({ code: -32602, message: 'rows too large' }) });
    expect(rpcError(await call('operation_result', { operationId: refused }))).toMatchObject({ code: -32602, message: 'rows too large' });
  });

  it('operation_result refuses a wait above 50 seconds as invalid arguments', async () => {
    const id = await startJob();
    expect(rpcError(await call('operation_result', { operationId: id, waitSeconds: 51 }))).toMatchObject({
      code: -32602,
      message: expect.stringContaining('waitSeconds'),
    });
  });

  it('operation_cancel stops a running operation; operation_result then says it has no result', async () => {
    const id = await startJob();
    const result = ok(await call('operation_cancel', { operationId: id }));
    expect(result.structuredContent).toMatchObject({ operationId: id, status: 'canceled' });
    const record = await on.app.operations.readCurrent({ ownerId: ownerIdFor('anonymous'), token: id });
    expect(on.engine.executions.get(record.executionArn!)!.status).toBe('ABORTED');
    expect(ok(await call('operation_result', { operationId: id }))).toMatchObject({ isError: true, structuredContent: { status: 'canceled' } });
  });

  it('operation_cancel of an operation that already finished keeps its result', async () => {
    const id = await startJob();
    await finish(id, 'anonymous', { status: 'SUCCEEDED', output: { passed: 2 } });
    expect(ok(await call('operation_cancel', { operationId: id })).structuredContent).toMatchObject({ status: 'completed' });
    expect(ok(await call('operation_result', { operationId: id })).structuredContent).toEqual({ passed: 2 });
  });

  it("operation_list lists this principal's handle operations only, newest first, in pages", async () => {
    const principal = 'Bearer lister';
    // Each start answers only at the 1 s sync bound, its execution still running: the next is sent
    // once the engine has this one, a millisecond later, so creation order is call order and
    // the 51 bounds overlap instead of adding up to most of a minute.
    const starts: Promise<string>[] = [];
    for (let i = 0; i < 51; i++) {
      const before = on.engine.executionCount;
      starts.push(startJob(as(principal)));
      await vi.waitFor(() => expect(on.engine.executionCount).toBe(before + 1), { interval: 1, timeout: 10_000 });
      await sleep(1);
    }
    const ids = await Promise.all(starts);
    // An operation of another dialect, and another principal's handle, are not listed.
    ok(await legacyRequest(on.server.url, 'tools/call', { name: 'job', arguments: {}, operation: { token: 'sep-op' } }, { version: OLD, ...as(principal) }));
    await startJob(as('Bearer someone-else'));

    const first = ok(await call('operation_list', {}, as(principal))).structuredContent;
    // A page holds at most 50; the other dialect's operation takes a place in the store's page.
    expect(first.operations).toHaveLength(49);
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(first.operations[0]).toEqual({
      operationId: ids[50],
      tool: 'job',
      status: 'working',
      statusMessage: 'The operation is running.',
      pollAfterSeconds: 5,
      createdAt: expect.any(String),
    });
    const second = ok(await call('operation_list', { cursor: first.nextCursor }, as(principal))).structuredContent;
    expect([...first.operations, ...second.operations].map((o: { operationId: string }) => o.operationId)).toEqual([...ids].reverse());
    expect(second.nextCursor).toBeUndefined();
  });

  it('operation_list refuses a forged or overlong cursor as invalid arguments', async () => {
    expect(rpcError(await call('operation_list', { cursor: 'forged' })).code).toBe(-32602);
    expect(rpcError(await call('operation_list', { cursor: 'x'.repeat(5000) })).code).toBe(-32602);
  });

  it("another principal's operationId, another dialect's, an overlong and an unknown one all answer alike", async () => {
    const mine = await startJob(as('Bearer owner'));
    ok(
      await legacyRequest(
        on.server.url,
        'tools/call',
        { name: 'job', arguments: {}, operation: { token: 'sep-token' } },
        { version: OLD, ...as('Bearer intruder') },
      ),
    );
    const answers = [];
    for (const operationId of [mine, 'sep-token', 'x'.repeat(300), 'no-such-operation']) {
      for (const tool of ['operation_status', 'operation_result', 'operation_cancel'])
        answers.push(ok(await call(tool, { operationId }, as('Bearer intruder'))));
    }
    expect(answers[0]).toEqual({ isError: true, content: [{ type: 'text', text: expect.stringContaining('No operation with that operationId exists') }] });
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    // The owner's operation was not touched.
    expect(ok(await call('operation_status', { operationId: mine }, as('Bearer owner'))).structuredContent.status).toBe('working');
  });

  it('refuses missing or unexpected arguments as invalid', async () => {
    expect(rpcError(await call('operation_status', {})).code).toBe(-32602);
    expect(rpcError(await call('operation_cancel', { operationId: 'a', extra: 1 })).code).toBe(-32602);
  });
});
