/**
 * What the initialize-era wires show of a question, over the real edge and core on
 * in-memory ports: `input_required` only while some question is open (not while every one
 * is being answered by another instance), and SEP-1391 status streams exactly the open ones.
 */
import { describe, expect, it } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';
import { jsonRpcMessagesOf } from '../support/raw-mcp.ts';

const tool = testTool({ name: 'approve' });
const confirm = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };
const CAPABILITIES = { experimental: { longRunningOperations: {} }, elicitation: {} };

async function asking(method: 'task' | 'operation') {
  const store = new InMemoryRecordStore();
  const app = createAsyncMcpApp({
    store,
    engine: new FakeWorkflowEngine(),
    catalog: createToolCatalog([tool]),
    secretKey: TEST_SECRET_KEY,
    logger: { error: () => undefined, warn: () => undefined },
  });
  const post = async (message: Record<string, unknown>) => {
    const params = { ...(message.params as object), _meta: { 'io.modelcontextprotocol/clientCapabilities': CAPABILITIES } };
    const response = await app.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message, params }),
      }),
      'alice',
    );
    const text = await response.text();
    return jsonRpcMessagesOf(text);
  };
  const started = await post({
    method: 'tools/call',
    params: { name: 'approve', arguments: {}, ...(method === 'task' ? { task: {} } : { operation: { token: 'op-1' } }) },
  });
  const token: string = method === 'task' ? started[0].result.task.taskId : 'op-1';
  const key = { ownerId: ownerIdFor('alice'), token };
  const record = await app.operations.readLive(key);
  await app.operations.inputs.ask({ operation: key, executionName: record.executionName, key: 'confirm', request: confirm, taskToken: 'task-token' });
  /** Marks the question as being answered right now, as an instance delivering an answer does. */
  const claim = async () => {
    const current = (await store.get(key))!;
    const entry = current.pendingInputs!.confirm!;
    await store.transition(key, ['input_required'], { pendingInputs: { confirm: { ...entry, answeringSince: Date.now() } } });
  };
  return { post, token, claim };
}

describe('2025-11-25 tasks/get', () => {
  it('shows input_required while a question is open, and working while every question is being answered', async () => {
    const { post, token, claim } = await asking('task');
    expect((await post({ method: 'tasks/get', params: { taskId: token } }))[0].result.status).toBe('input_required');
    await claim();
    expect((await post({ method: 'tasks/get', params: { taskId: token } }))[0].result).toMatchObject({
      status: 'working',
      statusMessage: 'The operation is running.',
    });
  });
});

describe('SEP-1391 tools/async/status', () => {
  it('streams each open question before its input_required result, and neither once every question is being answered', async () => {
    const { post, token, claim } = await asking('operation');
    const open = await post({ method: 'tools/async/status', params: { token } });
    expect(open.map((m) => m.method ?? m.result.status)).toEqual(['elicitation/create', 'input_required']);
    expect(open[0].params._operation).toEqual({ token });
    await claim();
    const answering = await post({ method: 'tools/async/status', params: { token } });
    expect(answering.map((m) => m.method ?? m.result.status)).toEqual(['working']);
    expect(answering[0].result.statusMessage).toBe('The operation is running.');
  });
});
