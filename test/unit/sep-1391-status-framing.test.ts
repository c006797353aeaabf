/**
 * SEP-1391 `tools/async/status` over the initialize-era wire: a status with no open question
 * sends nothing before its result, so it is answered as one JSON object (Streamable HTTP
 * allows either to a client that accepts both); one with open questions streams them first
 * over SSE. Either way the poll reads its record once: the edge's look at the record and the
 * handler share the read.
 */
import { describe, expect, it } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import type { OperationKey } from '../../lambdas/operations/operation.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { jsonRpcMessagesOf } from '../support/raw-mcp.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const CAPABILITIES = { experimental: { longRunningOperations: {} }, elicitation: {} };
const confirm = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };

/** A record store that counts its reads of one record. */
class CountingRecordStore extends InMemoryRecordStore {
  reads = 0;
  override get(key: OperationKey) {
    this.reads++;
    return super.get(key);
  }
}

async function started() {
  const store = new CountingRecordStore();
  const app = createAsyncMcpApp({
    store,
    engine: new FakeWorkflowEngine(),
    catalog: createToolCatalog([testTool({ name: 'approve' })]),
    secretKey: TEST_SECRET_KEY,
    logger: { error: () => undefined, warn: () => undefined },
  });
  const post = async (method: string, params: Record<string, unknown>) => {
    const response = await app.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params: { ...params, _meta: { 'io.modelcontextprotocol/clientCapabilities': CAPABILITIES } } }),
      }),
      'alice',
    );
    return { contentType: response.headers.get('content-type'), messages: jsonRpcMessagesOf(await response.text()) };
  };
  await post('tools/call', { name: 'approve', arguments: {}, operation: { token: 'op-1' } });
  const key = { ownerId: ownerIdFor('alice'), token: 'op-1' };
  /** The status of op-1, with the record reads it made. */
  const status = async (token = 'op-1') => {
    const before = store.reads;
    const answer = await post('tools/async/status', { token });
    return { ...answer, reads: store.reads - before };
  };
  const ask = async () => {
    const record = await app.operations.readLive(key);
    await app.operations.inputs.ask({ operation: key, executionName: record.executionName, key: 'confirm', request: confirm, taskToken: 'task-token' });
  };
  return { status, ask };
}

describe('SEP-1391 tools/async/status framing', () => {
  it('answers a status with no open question as one JSON object, reading the record once', async () => {
    const { status } = await started();
    const answer = await status();
    expect(answer.contentType).toBe('application/json');
    expect(answer.messages).toEqual([
      expect.objectContaining({ id: 9, result: expect.objectContaining({ status: 'working', _operation: { token: 'op-1' } }) }),
    ]);
    expect(answer.reads).toBe(1);
  });

  it('streams an open question before its input_required result over SSE, still reading the record once', async () => {
    const { status, ask } = await started();
    await ask();
    const answer = await status();
    expect(answer.contentType).toBe('text/event-stream');
    expect(answer.messages.map((m) => m.method ?? m.result.status)).toEqual(['elicitation/create', 'input_required']);
    expect(answer.messages[0].params._operation).toEqual({ token: 'op-1' });
    expect(answer.reads).toBe(1);
  });

  it('answers an unknown token as one JSON error object, reading once', async () => {
    const { status } = await started();
    const answer = await status('no-such-operation');
    expect(answer.contentType).toBe('application/json');
    expect(answer.messages).toEqual([expect.objectContaining({ id: 9, error: expect.objectContaining({ message: expect.stringContaining('not found') }) })]);
    expect(answer.reads).toBe(1);
  });
});
