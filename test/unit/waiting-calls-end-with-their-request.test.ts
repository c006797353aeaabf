/**
 * Calls that wait on a run, over the real edge and core on in-memory ports: once the client
 * goes away (the request is aborted, its stream cancelled), the server stops waiting on the
 * run, and leaves the run itself going ("Disconnection SHOULD NOT be interpreted as the client
 * cancelling its request", Streamable HTTP). A wait that went on would keep reading the store
 * until its bound, holding a Lambda invocation open or running on into later ones.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tasks20260728Dialect } from '../../lambdas/mcp/dialects/tasks-2026-07-28.ts';
import { createHttpHandler } from '../../lambdas/mcp/edge/http-handler.ts';
import { mintSessionId } from '../../lambdas/mcp/input/legacy-session.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { createToolCatalog, type ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { memoryLogger, TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const PRINCIPAL = 'alice';
const OWNER = ownerIdFor(PRINCIPAL);
const LEGACY = '2025-06-18';
const MODERN = '2026-07-28';
const confirm = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Bounds far longer than a test: only the client going away can end a wait in time. */
const LONG = { keepAliveSeconds: 60, maxKeepAliveSeconds: 600, pollIntervalSeconds: 1, syncTimeoutSeconds: 30, maxRunSeconds: 3600 };

afterEach(() => {
  vi.restoreAllMocks();
});

function serverWith(tools: ToolSpec[]) {
  const store = new InMemoryRecordStore();
  const engine = new FakeWorkflowEngine();
  const logger = memoryLogger();
  const operations = createOperations({
    store,
    engine,
    limits: { ...TEST_LIMITS, maxBlockingSeconds: 30 },
    clock: { now: () => Date.now() },
    logger,
    input: mcpInputProtocol,
  });
  const fetch = createHttpHandler({
    deps: { catalog: createToolCatalog(tools), operations, logger, secretKey: TEST_SECRET_KEY },
    dialects: [tasks20260728Dialect],
  });
  return { store, engine, logger, operations, fetch };
}
type Served = ReturnType<typeof serverWith>;

/** A request the test can abandon: `client.abort()` is the client going away. */
function post(served: Served, body: Record<string, unknown>, headers: Record<string, string>, client: AbortController): Promise<Response> {
  return served.fetch(
    new Request('http://localhost/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'call-1', ...body }),
      signal: client.signal,
    }),
    PRINCIPAL,
  );
}

async function legacyHeaders(): Promise<Record<string, string>> {
  return { 'mcp-protocol-version': LEGACY, 'mcp-session-id': await mintSessionId({ elicitation: {} }, OWNER, TEST_SECRET_KEY) };
}

/** The one operation the call started, once it has. */
async function startedOperation(served: Served): Promise<OperationRecord> {
  for (;;) {
    const [record] = (await served.store.listByOwner(OWNER, { limit: 10 })).items;
    if (record?.executionName) return record;
    await sleep(10);
  }
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

/**
 * Expects no store read once the wait has had time to notice: a read already under way may
 * finish, after which none may start. Real time: a wait reads again within a second (its
 * longest pause) while it still waits.
 */
async function expectNoMoreReads(reads: { mock: { calls: unknown[] } }): Promise<void> {
  await sleep(200);
  const settled = reads.mock.calls.length;
  await sleep(1_500);
  expect(reads.mock.calls.length).toBe(settled);
}

const modernMeta = (capabilities: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});
const modernHeaders = (name: string) => ({ 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name });

/** An initialize-era call that streams: the client reads its question, then goes away. */
async function abandonAfterQuestion(served: Served, params: Record<string, unknown>, ask: () => Promise<unknown>): Promise<string> {
  const client = new AbortController();
  const responding = post(served, { method: 'tools/call', params }, await legacyHeaders(), client);
  await ask();
  const reader = (await responding).body!.getReader();
  const seen = await readUntil(reader, 'elicitation/create');
  client.abort();
  await reader.cancel();
  return seen;
}

/** Asks the one operation a call started a question, once it has started it. */
async function askStarted(served: Served): Promise<void> {
  const record = await startedOperation(served);
  await served.operations.inputs.ask({ operation: record, executionName: record.executionName, key: 'confirm', request: confirm, taskToken: 'waiting-state' });
}

/** The run was left as it was: not stopped, and nothing logged as an error (the client's doing). */
async function expectRunGoesOn(served: Served, status: OperationRecord['status']): Promise<void> {
  const [record] = (await served.store.listByOwner(OWNER, { limit: 10 })).items;
  expect(record?.status).toBe(status);
  expect(served.engine.stopCalls).toBe(0);
  expect(served.logger.lines.filter(({ level }) => level === 'error')).toEqual([]);
}

describe('initialize-era calls that wait on their run', () => {
  it('a synchronous call whose client goes away stops reading its task, and its run goes on', async () => {
    const served = serverWith([testTool({ name: 'deploy', invocation: 'sync', timing: LONG })]);
    const reads = vi.spyOn(served.store, 'get');
    expect(await abandonAfterQuestion(served, { name: 'deploy', arguments: {} }, () => askStarted(served))).toContain('Deploy?');
    await expectNoMoreReads(reads);
    await expectRunGoesOn(served, 'input_required');
  });

  it('a long-running call answered with a handle whose client goes away before the bound stops waiting, and its operation goes on', async () => {
    const served = serverWith([testTool({ name: 'deploy', invocation: 'both', timing: LONG })]);
    const reads = vi.spyOn(served.store, 'get');
    expect(await abandonAfterQuestion(served, { name: 'deploy', arguments: {} }, () => askStarted(served))).toContain('Deploy?');
    await expectNoMoreReads(reads);
    await expectRunGoesOn(served, 'input_required');
  });

  it('operation_result whose client goes away stops waiting on the operation, which goes on', async () => {
    const tool = testTool({ name: 'deploy', invocation: 'both', timing: LONG });
    const served = serverWith([tool]);
    const record = await served.operations.start({
      ownerId: OWNER,
      tool,
      arguments: {},
      token: 'op-1',
      dialect: 'handle',
      clientCapabilities: { elicitation: {} },
    });
    const reads = vi.spyOn(served.store, 'get');
    const params = { name: 'operation_result', arguments: { operationId: 'op-1', waitSeconds: 30 } };
    const ask = () =>
      served.operations.inputs.ask({ operation: record, executionName: record.executionName, key: 'confirm', request: confirm, taskToken: 'waiting-state' });
    expect(await abandonAfterQuestion(served, params, ask)).toContain('Deploy?');
    await expectNoMoreReads(reads);
    await expectRunGoesOn(served, 'input_required');
  });
});

describe('2026-07-28 calls that wait on their run', () => {
  /** A call whose client goes away once its run has started and been read. */
  async function abandonWhileRunning(served: Served, name: string, capabilities?: Record<string, unknown>) {
    const reads = vi.spyOn(served.store, 'get');
    const client = new AbortController();
    const responding = post(served, { method: 'tools/call', params: { name, arguments: {}, _meta: modernMeta(capabilities) } }, modernHeaders(name), client);
    await startedOperation(served);
    while (reads.mock.calls.length === 0) await sleep(10);
    client.abort();
    await responding.catch(() => undefined);
    return reads;
  }

  it('a synchronous call whose client goes away stops waiting on its run, and its run goes on', async () => {
    const served = serverWith([testTool({ name: 'deploy', invocation: 'sync', timing: LONG })]);
    await expectNoMoreReads(await abandonWhileRunning(served, 'deploy'));
    await expectRunGoesOn(served, 'working');
  });

  it('an EXPRESS call whose client goes away stops waiting for its synchronous run, which nothing can stop', async () => {
    const served = serverWith([testTool({ name: 'lookup', invocation: 'sync', workflowType: 'EXPRESS', timing: LONG })]);
    served.engine.syncDelayMs = 60_000;
    const starts = vi.spyOn(served.engine, 'startSync');
    const client = new AbortController();
    const responding = post(served, { method: 'tools/call', params: { name: 'lookup', arguments: {}, _meta: modernMeta() } }, modernHeaders('lookup'), client);
    while (starts.mock.calls.length === 0) await sleep(10);
    const waiting = starts.mock.calls[0]![1]!;
    expect(waiting.aborted).toBe(false);
    client.abort();
    await responding.catch(() => undefined);
    await sleep(100);
    // The wait for StartSyncExecution's answer is given up, not held until the bound (30 s here).
    expect(waiting.aborted).toBe(true);
    expect(served.logger.lines.filter(({ level }) => level === 'error')).toEqual([]);
  });

  it('a task call that may ask before creating its task stops waiting when its client goes away, and its run goes on', async () => {
    const served = serverWith([testTool({ name: 'deploy', invocation: 'both', timing: { ...LONG, askBeforeTaskSeconds: 30 } })]);
    await expectNoMoreReads(await abandonWhileRunning(served, 'deploy', { extensions: { 'io.modelcontextprotocol/tasks': {} } }));
    await expectRunGoesOn(served, 'working');
  });
});
