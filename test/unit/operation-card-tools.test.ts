/**
 * The operation card's app-only tools over the real MCP edge and core, on in-memory ports:
 * what the card reads of one operation (status, progress, latest log line, question,
 * result), how it finds an operation by the request that started it, and that its answer
 * and cancel act on the caller's own operations only, in any dialect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAsyncMcpApp, type AsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import type { OperationKey } from '../../lambdas/operations/operation.ts';
import type { ExecutionSnapshot } from '../../lambdas/operations/ports.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { serveFetch, type NodeHttpServer } from '../../local/node-http-server.ts';
import { TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { legacyRequest, modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const OLD = '2025-06-18';
const UI = { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } };
/** A host with MCP Apps and forms, without async support: it is served handle tools. */
const HOST = { extensions: UI, elicitation: { form: {} } };
const ALICE: CallOptions = { headers: { authorization: 'alice' }, capabilities: HOST };
const BOB: CallOptions = { headers: { authorization: 'bob' }, capabilities: HOST };

let app: AsyncMcpApp;
let engine: FakeWorkflowEngine;
let server: NodeHttpServer;

beforeAll(async () => {
  engine = new FakeWorkflowEngine();
  app = createAsyncMcpApp({
    store: new InMemoryRecordStore(),
    engine,
    catalog: createToolCatalog([testTool({ name: 'job', title: 'A long job' }), testTool({ name: 'other' })]),
    secretKey: TEST_SECRET_KEY,
    limits: TEST_LIMITS,
    logger: { error: () => undefined, warn: () => undefined },
  });
  server = await serveFetch((request) => app.fetch(request, request.headers.get('authorization') ?? 'anonymous'), { host: '127.0.0.1', port: 0, path: '/mcp' });
});
afterAll(async () => {
  await server?.close();
});

const call = (name: string, args: Record<string, unknown>, options: CallOptions = ALICE) =>
  legacyRequest(server.url, 'tools/call', { name, arguments: args }, { version: OLD, ...options });
const card = async (name: string, args: Record<string, unknown>, options: CallOptions = ALICE) => ok(await call(name, args, options));
const keyOf = (operationId: string, principal = 'alice'): OperationKey => ({ ownerId: ownerIdFor(principal), token: operationId });

/** Starts `job` with the handle tools; it is handed off at its 1 s bound. */
async function startJob(id?: string): Promise<string> {
  const started = ok(await call('job', { n: 1 }, { ...ALICE, ...(id ? { id } : {}) }));
  return started.structuredContent.operationId as string;
}

async function finish(operationId: string, result: Partial<ExecutionSnapshot> & Pick<ExecutionSnapshot, 'status'>) {
  const record = await app.operations.readCurrent(keyOf(operationId));
  await app.operations.applyExecution(keyOf(operationId), engine.finish(record.executionArn!, result));
}

describe('operation_card_status', () => {
  it('reads a running operation: tool, title, status, elapsed time, poll interval', async () => {
    const operationId = await startJob();
    const read = await card('operation_card_status', { operationId });
    expect(read.isError).toBeUndefined();
    expect(read.structuredContent).toMatchObject({ operationId, tool: 'job', title: 'A long job', status: 'working', pollAfterSeconds: 5 });
    expect(read.structuredContent.elapsedSeconds).toBeGreaterThan(0);
    expect(read.content).toEqual([{ type: 'text', text: expect.stringContaining('A long job: working') }]);
  });

  it("shows the run's latest progress and its latest log line of info or above", async () => {
    const operationId = await startJob();
    const { executionName } = await app.operations.readCurrent(keyOf(operationId));
    const report = (body: Record<string, unknown>) => app.operations.reports.report({ operation: keyOf(operationId), executionName, report: body });
    await report({ progress: 2, total: 10, message: 'chunk 2 of 10' });
    await report({ level: 'info', data: 'read 200,000 rows' });
    await report({ level: 'debug', data: 'a detail' });
    await report({ increment: 1 });
    const read = await card('operation_card_status', { operationId });
    expect(read.structuredContent.progress).toEqual({ progress: 3, total: 10 });
    expect(read.structuredContent.log).toEqual({ level: 'info', text: 'read 200,000 rows' });
  });

  it('finds the operation by the JSON-RPC id of the tools/call that started it, for that tool only', async () => {
    const operationId = await startJob('host-call-41');
    expect((await card('operation_card_status', { requestId: 'host-call-41', tool: 'job' })).structuredContent.operationId).toBe(operationId);
    expect((await card('operation_card_status', { requestId: 'host-call-41', tool: 'other' })).isError).toBe(true);
    // A JSON-RPC id keeps its type: 41 is not "41".
    expect((await card('operation_card_status', { requestId: 41, tool: 'job' })).isError).toBe(true);
  });

  it('answers "not found" for another principal\'s operation, as for an unknown id', async () => {
    const operationId = await startJob();
    const asBob = await card('operation_card_status', { operationId }, BOB);
    const unknown = await card('operation_card_status', { operationId: 'no-such-operation' });
    expect(asBob).toEqual(unknown);
    expect(asBob).toEqual({ content: [{ type: 'text', text: 'No operation of yours has that id.' }], isError: true });
  });

  it('carries the result once the run has ended: structured content, or the tool error', async () => {
    const done = await startJob();
    await finish(done, { status: 'SUCCEEDED', output: { count: 3, mean: 1.5 } });
    const read = await card('operation_card_status', { operationId: done });
    expect(read.structuredContent).toMatchObject({ status: 'completed', result: { structuredContent: { count: 3, mean: 1.5 } } });
    const failed = await startJob();
    await finish(failed, { status: 'FAILED', error: 'Boom', cause: 'it broke' });
    const failure = await card('operation_card_status', { operationId: failed });
    expect(failure.structuredContent).toMatchObject({ status: 'failed', result: { isError: true } });
  });

  it('reads a task another dialect started (the Tasks extension), for the same principal', async () => {
    const capabilities = { extensions: { ...UI, 'io.modelcontextprotocol/tasks': {} } };
    const created = ok(await modernRequest(server.url, 'tools/call', { name: 'job', arguments: {} }, { capabilities, headers: { authorization: 'alice' } }));
    const read = ok(
      await modernRequest(
        server.url,
        'tools/call',
        { name: 'operation_card_status', arguments: { operationId: created.taskId } },
        { capabilities, headers: { authorization: 'alice' } },
      ),
    );
    expect(read.structuredContent).toMatchObject({ operationId: created.taskId, tool: 'job', status: 'working' });
  });

  it('refuses arguments it cannot read: both ids, or neither', async () => {
    expect((await call('operation_card_status', {})).message?.error?.code).toBe(-32602);
    expect((await call('operation_card_status', { operationId: 'a', requestId: 'b' })).message?.error?.code).toBe(-32602);
  });
});

describe('operation_card_answer and operation_card_cancel', () => {
  async function ask(operationId: string): Promise<string> {
    const { executionName } = await app.operations.readCurrent(keyOf(operationId));
    const request = {
      method: 'elicitation/create',
      params: { message: 'Deploy 2 changes?', requestedSchema: { type: 'object', properties: { comment: { type: 'string' } } } },
    };
    const { key } = await app.operations.inputs.ask({ operation: keyOf(operationId), executionName, request, taskToken: `token-${operationId}` });
    return key;
  }

  it('the card reads the question as a form, and its answer resumes the run with what the user entered', async () => {
    const operationId = await startJob();
    const key = await ask(operationId);
    const asked = await card('operation_card_status', { operationId });
    expect(asked.structuredContent).toMatchObject({
      status: 'input_required',
      question: { key, message: 'Deploy 2 changes?', requestedSchema: { properties: { comment: { type: 'string' } } } },
    });
    const answered = await card('operation_card_answer', { operationId, key, action: 'accept', content: { comment: 'ship it' } });
    expect(answered.structuredContent).toMatchObject({ answer: 'delivered', status: 'working' });
    expect(answered.structuredContent.question).toBeUndefined();
    expect(engine.taskCalls.at(-1)).toEqual({ taskToken: `token-${operationId}`, output: { action: 'accept', content: { comment: 'ship it' } } });
    // A second answer finds the question answered.
    expect((await card('operation_card_answer', { operationId, key, action: 'decline' })).structuredContent.answer).toBe('ignored');
  });

  it('another principal cannot answer the question, nor cancel the operation', async () => {
    const operationId = await startJob();
    const key = await ask(operationId);
    expect((await card('operation_card_answer', { operationId, key, action: 'decline' }, BOB)).isError).toBe(true);
    expect((await card('operation_card_cancel', { operationId }, BOB)).isError).toBe(true);
    expect((await card('operation_card_status', { operationId })).structuredContent.status).toBe('input_required');
  });

  it('Cancel stops the run and the card reads it cancelled; cancelling an ended operation keeps its result', async () => {
    const operationId = await startJob();
    const cancelled = await card('operation_card_cancel', { operationId });
    expect(cancelled.structuredContent).toMatchObject({ operationId, status: 'canceled' });
    expect(cancelled.structuredContent.result).toBeUndefined();
    const done = await startJob();
    await finish(done, { status: 'SUCCEEDED', output: { count: 1 } });
    expect((await card('operation_card_cancel', { operationId: done })).structuredContent).toMatchObject({
      status: 'completed',
      result: { structuredContent: { count: 1 } },
    });
  });
});
