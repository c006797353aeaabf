/**
 * Streamable HTTP lets a server answer a request with one JSON object or an SSE stream.
 * An initialize-era request whose answer is its response alone (a poll) gets JSON; a call,
 * which may stream progress and questions first, keeps SSE.
 */
import { describe, expect, it } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { jsonRpcMessagesOf } from '../support/raw-mcp.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const app = createAsyncMcpApp({
  store: new InMemoryRecordStore(),
  engine: new FakeWorkflowEngine(),
  catalog: createToolCatalog([testTool({ name: 'analyze' })]),
  secretKey: TEST_SECRET_KEY,
});

async function post(method: string, params: Record<string, unknown>) {
  const response = await app.fetch(
    new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
    }),
    'alice',
  );
  return { contentType: response.headers.get('content-type'), messages: jsonRpcMessagesOf(await response.text()) };
}

describe('initialize-era answer framing', () => {
  it('answers tasks/get, tasks/list and tools/list as one JSON object, and tools/call as SSE', async () => {
    const call = await post('tools/call', { name: 'analyze', arguments: {}, task: {} });
    expect(call.contentType).toBe('text/event-stream');
    const taskId = call.messages[0].result.task.taskId as string;
    for (const [method, params] of [
      ['tasks/get', { taskId }],
      ['tasks/list', {}],
      ['tools/list', {}],
    ] as const) {
      const answer = await post(method, params);
      expect(answer.contentType, method).toBe('application/json');
      expect(answer.messages, method).toEqual([expect.objectContaining({ jsonrpc: '2.0', id: 7, result: expect.any(Object) })]);
    }
    expect((await post('tasks/get', { taskId })).messages[0].result).toMatchObject({ taskId, status: 'working' });
  });

  it('answers an error the same way: an unknown task is one JSON error object', async () => {
    const answer = await post('tasks/get', { taskId: 'no-such-task' });
    expect(answer.contentType).toBe('application/json');
    expect(answer.messages).toEqual([expect.objectContaining({ id: 7, error: expect.objectContaining({ code: -32602 }) })]);
  });
});
