/**
 * A deploy never takes away finished work. Over the real MCP edge and core on in-memory
 * ports, several "deploys" (apps with different catalogs) share one record store and one
 * workflow engine, as two Lambda versions share the table and Step Functions: a result is
 * checked once, when its operation completes, against the tool as its execution ran, and
 * reads serve what was stored, whatever the catalog of the deploy that reads it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createAsyncMcpApp, type AsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import type { ExecutionStatusChangeEvent } from '../../lambdas/aws/status-sync.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { createToolCatalog, type ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { serveFetch, type NodeHttpServer } from '../../local/node-http-server.ts';
import { ManualClock, memoryLogger, TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { legacyRequest, modernRequest, type RawResponse } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const PRINCIPAL = 'redeploy-tester';
const OWNER = ownerIdFor(PRINCIPAL);
const FIRST_SCHEMA = { type: 'object', properties: { passed: { type: 'integer' } }, required: ['passed'] };
/** The deploy after: the same tool now promises a field the old results never had. */
const CHANGED_SCHEMA = { type: 'object', properties: { score: { type: 'string' } }, required: ['score'] };
const firstJob = testTool({ name: 'job', outputSchema: FIRST_SCHEMA, invocation: 'async' });
const changedJob = testTool({ name: 'job', outputSchema: CHANGED_SCHEMA, invocation: 'async' });
const other = testTool({ name: 'other' });

const store = new InMemoryRecordStore();
const engine = new FakeWorkflowEngine();
const servers: NodeHttpServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

interface Deploy {
  app: AsyncMcpApp;
  url: URL;
}

/** One deployed version of the server: its own catalog over the shared table and engine. */
async function deploy(tools: ToolSpec[]): Promise<Deploy> {
  const app = createAsyncMcpApp({
    store,
    engine,
    catalog: createToolCatalog(tools),
    secretKey: TEST_SECRET_KEY,
    limits: { ...TEST_LIMITS, maxActiveOperations: 1000 },
    logger: { error: () => undefined, warn: () => undefined },
  });
  const server = await serveFetch((request) => app.fetch(request, PRINCIPAL), { host: '127.0.0.1', port: 0, path: '/mcp' });
  servers.push(server);
  return { app, url: server.url };
}

const before = await deploy([firstJob, other]);
const changed = await deploy([changedJob, other]);
const removed = await deploy([other]);

const LRO = { experimental: { longRunningOperations: {} } };
const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
let tokens = 0;

/** How each dialect starts `job`, reads its final answer (the CallToolResult, or the JSON-RPC error) and lists it. */
const dialects = [
  {
    name: 'SEP-1391',
    async start(on: Deploy) {
      const token = `redeploy-${++tokens}-${Date.now()}`;
      ok(await legacyRequest(on.url, 'tools/call', { name: 'job', arguments: {}, operation: { token } }, { capabilities: LRO }));
      return token;
    },
    async final(on: Deploy, token: string) {
      const response = await legacyRequest(on.url, 'tools/async/result', { token });
      return response.message?.error ? { error: response.message.error } : { result: response.message!.result.result };
    },
    status: async (on: Deploy, token: string) => ok(await legacyRequest(on.url, 'tools/async/status', { token })).status,
  },
  {
    name: 'Tasks extension (2026-07-28)',
    async start(on: Deploy) {
      return ok(await modernRequest(on.url, 'tools/call', { name: 'job', arguments: {} }, { capabilities: EXT })).taskId as string;
    },
    async final(on: Deploy, taskId: string) {
      const task = ok(await modernRequest(on.url, 'tasks/get', { taskId }, { capabilities: EXT }));
      return task.error ? { error: task.error } : { result: task.result };
    },
    status: async (on: Deploy, taskId: string) => ok(await modernRequest(on.url, 'tasks/get', { taskId }, { capabilities: EXT })).status,
  },
  {
    name: '2025-11-25 tasks',
    async start(on: Deploy) {
      return ok(await legacyRequest(on.url, 'tools/call', { name: 'job', arguments: {}, task: {} })).task.taskId as string;
    },
    async final(on: Deploy, taskId: string) {
      const response: RawResponse = await legacyRequest(on.url, 'tasks/result', { taskId });
      return response.message?.error ? { error: response.message.error } : { result: response.message!.result };
    },
    status: async (on: Deploy, taskId: string) => ok(await legacyRequest(on.url, 'tasks/get', { taskId })).status,
  },
];

/** The record a dialect's handle names. */
async function recordOf(token: string): Promise<OperationRecord> {
  const record = await store.get({ ownerId: OWNER, token });
  if (!record) throw new Error(`no record for ${token}`);
  return record;
}

/** Ends the execution as Step Functions would, and delivers its status event through `on`'s status-sync. */
async function succeed(on: Deploy, token: string, output: unknown): Promise<void> {
  const { executionArn } = await recordOf(token);
  const execution = engine.finish(executionArn!, { status: 'SUCCEEDED', output });
  const event: ExecutionStatusChangeEvent = {
    detail: {
      executionArn: execution.executionArn,
      status: 'SUCCEEDED',
      output: JSON.stringify(output),
      input: JSON.stringify(execution.input),
      stopDate: execution.stopDate!.getTime(),
    },
  };
  await on.app.statusSync(event);
}

describe.each(dialects)('$name', (dialect) => {
  it("a result finished before a deploy that changes its tool's outputSchema reads as it was", async () => {
    const handle = await dialect.start(before);
    await succeed(before, handle, { passed: 3 });
    const final = await dialect.final(changed, handle);
    expect(final).toEqual({ result: expect.objectContaining({ structuredContent: { passed: 3 } }) });
    expect(final.result.isError).toBeUndefined();
  });

  it('a result finished before a deploy that removes its tool reads as it was', async () => {
    const handle = await dialect.start(before);
    await succeed(before, handle, { passed: 4 });
    expect(await dialect.status(removed, handle)).toBe('completed');
    expect(await dialect.final(removed, handle)).toEqual({ result: expect.objectContaining({ structuredContent: { passed: 4 } }) });
  });

  it('an execution started before a deploy and finished after it is checked against the tool it started with', async () => {
    const handle = await dialect.start(before);
    // The new deploy's status-sync sees the end; the old contract still decides.
    await succeed(changed, handle, { passed: 5 });
    expect(await dialect.status(changed, handle)).toBe('completed');
    expect(await dialect.final(changed, handle)).toEqual({ result: expect.objectContaining({ structuredContent: { passed: 5 } }) });
  });

  it("an output that broke its tool's contract when it finished stays a failure after a deploy that would accept it", async () => {
    const handle = await dialect.start(before);
    await succeed(before, handle, { score: 'A' });
    const final = await dialect.final(changed, handle);
    expect(final).toEqual({ error: expect.objectContaining({ code: -32603, message: expect.stringContaining('does not match its outputSchema') }) });
    expect(await dialect.status(changed, handle)).toBe('failed');
  });
});

describe('operations of a removed tool', () => {
  it('a running one is listed, and a cancel stops its execution', async () => {
    const { task } = ok(await legacyRequest(before.url, 'tools/call', { name: 'job', arguments: {}, task: {} }));
    const { tasks } = ok(await legacyRequest(removed.url, 'tasks/list', {}));
    expect(tasks.map((t: { taskId: string }) => t.taskId)).toContain(task.taskId);
    expect(ok(await legacyRequest(removed.url, 'tasks/cancel', { taskId: task.taskId })).status).toBe('cancelled');
    const { executionArn } = await recordOf(task.taskId);
    expect(engine.executions.get(executionArn!)?.status).toBe('ABORTED');
  });

  it('a cancel of one whose machine is gone ends it cancelled', async () => {
    const taskId = ok(await modernRequest(before.url, 'tools/call', { name: 'job', arguments: {} }, { capabilities: EXT })).taskId;
    engine.executions.delete((await recordOf(taskId)).executionArn!);
    ok(await modernRequest(removed.url, 'tasks/cancel', { taskId }, { capabilities: EXT }));
    expect(await recordOf(taskId)).toMatchObject({ status: 'canceled', statusMessage: expect.stringContaining('its tool was removed while it ran') });
  });

  it('starting it answers "Unknown tool"', async () => {
    const error = rpcError(await legacyRequest(removed.url, 'tools/call', { name: 'job', arguments: {}, task: {} }));
    expect(error).toMatchObject({ code: -32602, message: 'Unknown tool: job' });
  });

  it('a record still working whose execution is gone is failed on its next status read: "the tool was removed while this ran"', async () => {
    const clock = new ManualClock();
    const limits = { ...TEST_LIMITS, maxActiveOperations: 1000 };
    const core = createOperations({ store, engine, limits, clock, logger: memoryLogger(), catalog: createToolCatalog([other]), input: mcpInputProtocol });
    const started = await createOperations({ store, engine, limits, clock, input: mcpInputProtocol }).start({
      ownerId: OWNER,
      tool: firstJob,
      arguments: {},
      token: `gone-${Date.now()}`,
      dialect: 'tasks-2026-07-28',
    });
    engine.executions.delete(started.executionArn!);
    clock.advance(TEST_LIMITS.reconcileAfterSeconds + 1);
    const read = await core.readCurrent(started);
    expect(read).toMatchObject({
      status: 'failed',
      outcome: { kind: 'internal-error', message: expect.stringContaining('The tool was removed while this ran') },
    });
    // Its slot is given back with it.
    expect(await store.listActiveSlots(OWNER)).not.toContain(started.token);
  });
});

describe('records written before results were shaped at completion', () => {
  /** A finished record as earlier versions wrote it: the raw output, no recorded contract. */
  async function legacyRecord(token: string): Promise<void> {
    const now = Date.now();
    await store.create({
      ownerId: OWNER,
      token,
      tool: 'job',
      argumentsHash: 'h',
      dialect: 'tasks-2025-11-25',
      status: 'completed',
      statusMessage: 'The operation completed; its result is ready.',
      executionName: `legacy-${token}`,
      createdAt: now,
      updatedAt: now,
      completedAt: now,
      keepAliveSeconds: 60,
      pollIntervalSeconds: 5,
      expiresAt: Math.ceil(now / 1000) + 60,
      outcome: { kind: 'result', output: { passed: 7 } },
    });
  }

  it('read as before while their tool is served', async () => {
    await legacyRecord('legacy-served');
    expect(ok(await legacyRequest(before.url, 'tasks/result', { taskId: 'legacy-served' })).structuredContent).toEqual({ passed: 7 });
  });

  it('still read once their tool is removed', async () => {
    await legacyRecord('legacy-removed');
    expect(ok(await legacyRequest(removed.url, 'tasks/result', { taskId: 'legacy-removed' })).structuredContent).toEqual({ passed: 7 });
  });
});
