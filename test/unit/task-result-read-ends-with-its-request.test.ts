/**
 * A 2025-11-25 `tasks/result` that reads a task's question, over the real core and in-memory
 * ports: once its client goes away (the request is aborted, its stream cancelled), the server
 * stops waiting on the task. A wait that went on would keep reading the store until the
 * blocking bound, holding a Lambda invocation open or running on into later ones.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tasks20251125Dialect } from '../../lambdas/mcp/dialects/tasks-2025-11-25.ts';
import { createHttpHandler } from '../../lambdas/mcp/edge/http-handler.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { memoryLogger, TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const PRINCIPAL = 'alice';
const confirm = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(() => {
  vi.restoreAllMocks();
});

async function taskAskingAQuestion() {
  const store = new InMemoryRecordStore();
  const tool = testTool({ name: 'approve', invocation: 'both' });
  const logger = memoryLogger();
  // A real clock: the wait's bound is the server's, far longer than this test.
  const operations = createOperations({
    store,
    engine: new FakeWorkflowEngine(),
    limits: { ...TEST_LIMITS, maxBlockingSeconds: 30 },
    clock: { now: () => Date.now() },
    logger,
    input: mcpInputProtocol,
  });
  const record = await operations.start({
    ownerId: ownerIdFor(PRINCIPAL),
    tool,
    arguments: {},
    token: 'task-1',
    dialect: 'tasks-2025-11-25',
    clientCapabilities: { elicitation: {} },
  });
  await operations.inputs.ask({ operation: record, executionName: record.executionName, key: 'confirm', request: confirm, taskToken: 'waiting-state' });
  const fetch = createHttpHandler({
    deps: { catalog: createToolCatalog([tool]), operations, logger, secretKey: TEST_SECRET_KEY },
    dialects: [tasks20251125Dialect],
  });
  return { store, fetch, logger };
}

/** Reads the SSE body until `text` appears in it. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, text: string): Promise<string> {
  const decoder = new TextDecoder();
  let seen = '';
  while (!seen.includes(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before ${text}: ${seen}`);
    seen += decoder.decode(value, { stream: true });
  }
  return seen;
}

describe('2025-11-25 tasks/result and its question', () => {
  it('a tasks/result whose client went away after reading the question stops waiting on the task: no store read after it ended', async () => {
    const { store, fetch, logger } = await taskAskingAQuestion();
    const reads = vi.spyOn(store, 'get');
    const client = new AbortController();
    const response = await fetch(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'result-1', method: 'tasks/result', params: { taskId: 'task-1' } }),
        signal: client.signal,
      }),
      PRINCIPAL,
    );
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    expect(await readUntil(reader, 'elicitation/create')).toContain('Deploy?');
    expect(reads.mock.calls.length).toBeGreaterThan(0);

    client.abort();
    await reader.cancel();
    // A read already under way may finish; after that the wait must be over. Real time: the
    // store is read again within a second (the wait's longest pause) while anything still waits.
    await sleep(200);
    const settled = reads.mock.calls.length;
    await sleep(1_500);
    expect(reads.mock.calls.length).toBe(settled);
    // The request ended as the client's doing, not the server's fault: nothing to log as an error.
    expect(logger.lines.filter(({ level }) => level === 'error')).toEqual([]);
  });
});
