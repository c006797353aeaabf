/**
 * Operation metrics (issue 14, Metrics) from the EMF lines the process writes: requests
 * through the real app on in-memory ports, each served as a Lambda invocation (metrics
 * flushed when it is over), and status events through status-sync. Each line is checked
 * for namespace `AsyncMcp`, its dimension set and values, and its counts.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAsyncMcpApp, type AsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import type { ExecutionStatusChangeEvent } from '../../lambdas/aws/status-sync.ts';
import { streamingFunctionUrlHandler, type LambdaStreamingRuntime, type ResponseStream } from '../../lambdas/aws/function-url-adapter.ts';
import { requestLogFields } from '../../lambdas/observability/request-context.ts';
import { createEmfMetrics } from '../../lambdas/observability/emf-metrics.ts';
import { observeInvocation } from '../../lambdas/observability/request-observer.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { serveFetch, type NodeHttpServer } from '../../local/node-http-server.ts';
import { TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const SEP = { experimental: { longRunningOperations: {} }, elicitation: {} };
const PRINCIPAL = 'carol';
const as = { headers: { authorization: PRINCIPAL } };

interface Emf {
  _aws: { Timestamp: number; CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}

const written: string[] = [];
const engine = new FakeWorkflowEngine();
const metrics = createEmfMetrics();
let app: AsyncMcpApp;
let server: NodeHttpServer;

beforeAll(async () => {
  vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array) => {
    written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write);
  app = createAsyncMcpApp({
    store: new InMemoryRecordStore(),
    engine,
    catalog: createToolCatalog([testTool({ name: 'job' }), testTool({ name: 'report' })]),
    limits: TEST_LIMITS,
    secretKey: TEST_SECRET_KEY,
    logger: { error: () => undefined, warn: () => undefined },
    metrics,
  });
  const invocation = observeInvocation(metrics);
  // As in Lambda: the whole response is written inside the invocation, then metrics are flushed.
  server = await serveFetch(
    (request) =>
      invocation({ awsRequestId: 'r' }, async () => {
        const response = await app.fetch(request, request.headers.get('authorization') ?? 'anonymous');
        return new Response(await response.arrayBuffer(), { status: response.status, headers: response.headers });
      }),
    { host: '127.0.0.1', port: 0, path: '/mcp' },
  );
});

afterAll(async () => {
  await server.close();
  vi.restoreAllMocks();
});

beforeEach(() => {
  written.length = 0;
});

/** The EMF objects written since the test began. */
function emfLines(): Emf[] {
  return written
    .join('')
    .split('\n')
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Emf);
}

/** The EMF objects that hold `name`, checked for the namespace, the unit and the dimension set. */
function metric(name: string, unit: string, dimensions: string[]): Emf[] {
  const lines = emfLines().filter((line) => line._aws.CloudWatchMetrics[0]!.Metrics.some((m) => m.Name === name));
  for (const line of lines) {
    const [directive] = line._aws.CloudWatchMetrics;
    expect(directive!.Namespace).toBe('AsyncMcp');
    expect(directive!.Metrics).toContainEqual({ Name: name, Unit: unit });
    expect(directive!.Dimensions).toEqual([dimensions]);
    expect(line.service).toBe('async-mcp');
  }
  return lines;
}

const total = (lines: Emf[], name: string) => lines.reduce((sum, line) => sum + [line[name]].flat().reduce((a: number, v) => a + (v as number), 0), 0);

async function startTask(tool = 'job'): Promise<OperationRecord> {
  const created = ok(await modernRequest(server.url, 'tools/call', { name: tool, arguments: {} }, { capabilities: EXT, ...as }));
  return app.operations.readLive({ ownerId: ownerIdFor(PRINCIPAL), token: created.taskId as string });
}

/** The status-change event EventBridge delivers for the record's execution. */
function statusEvent(record: OperationRecord, status: 'SUCCEEDED' | 'FAILED', stoppedMsAgo: number): ExecutionStatusChangeEvent {
  const execution = engine.executions.get(record.executionArn!)!;
  return {
    id: randomBytes(8).toString('hex'),
    'detail-type': 'Step Functions Execution Status Change',
    source: 'aws.states',
    time: new Date().toISOString(),
    detail: {
      executionArn: record.executionArn!,
      name: record.executionName,
      status,
      startDate: execution.startDate!.getTime(),
      stopDate: Date.now() - stoppedMsAgo,
      input: JSON.stringify(execution.input),
      inputDetails: { included: true },
      output: status === 'SUCCEEDED' ? '{"ok":true}' : null,
      outputDetails: status === 'SUCCEEDED' ? { included: true } : null,
      error: status === 'FAILED' ? 'Tool.Crashed' : null,
      cause: status === 'FAILED' ? 'it crashed' : null,
    },
  };
}

describe('EMF metrics, namespace AsyncMcp', () => {
  it('a start counts OperationsStarted once, with dimensions service, tool and dialect', async () => {
    await startTask('report');
    const lines = metric('OperationsStarted', 'Count', ['service', 'tool', 'dialect']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ tool: 'report', dialect: 'tasks-2026-07-28', OperationsStarted: 1 });
  });

  it('a poll counts Polls with the dialect of the operation it reads, in every dialect', async () => {
    const task = await startTask();
    const legacyTask = ok(await legacyRequest(server.url, 'tools/call', { name: 'job', arguments: {}, task: {} }, as)).task.taskId as string;
    const token = `tok-${randomBytes(6).toString('hex')}`;
    ok(
      await legacyRequest(
        server.url,
        'tools/call',
        { name: 'job', arguments: {}, operation: { token }, _meta: { 'io.modelcontextprotocol/clientCapabilities': SEP } },
        as,
      ),
    );
    written.length = 0;
    ok(await modernRequest(server.url, 'tasks/get', { taskId: task.token }, { capabilities: EXT, ...as }));
    ok(await modernRequest(server.url, 'tasks/get', { taskId: task.token }, { capabilities: EXT, ...as }));
    ok(await legacyRequest(server.url, 'tasks/get', { taskId: legacyTask }, as));
    ok(await legacyRequest(server.url, 'tools/async/status', { token }, as));
    const lines = metric('Polls', 'Count', ['service', 'dialect']);
    const byDialect = (dialect: string) =>
      total(
        lines.filter((line) => line.dialect === dialect),
        'Polls',
      );
    expect([byDialect('tasks-2026-07-28'), byDialect('tasks-2025-11-25'), byDialect('sep-1391')]).toEqual([2, 1, 1]);
    // A poll is not a start, and reading a record ends nothing.
    expect(metric('OperationsStarted', 'Count', ['service', 'tool', 'dialect'])).toEqual([]);
  });

  it('a completion by status-sync counts OperationsCompleted once however often the event arrives, and StatusSyncLag in ms', async () => {
    const record = await startTask();
    written.length = 0;
    const event = statusEvent(record, 'SUCCEEDED', 250);
    await app.statusSync(event);
    await app.statusSync(event); // EventBridge delivers at least once.
    const completed = metric('OperationsCompleted', 'Count', ['service', 'tool', 'dialect']);
    expect(total(completed, 'OperationsCompleted')).toBe(1);
    expect(completed[0]).toMatchObject({ tool: 'job', dialect: 'tasks-2026-07-28' });
    const lag = metric('StatusSyncLag', 'Milliseconds', ['service']);
    const values = lag.flatMap((line) => [line.StatusSyncLag].flat() as number[]);
    expect(values).toHaveLength(2);
    expect(values.every((ms) => ms >= 250 && ms < 60_000)).toBe(true);
  });

  it('a tool failure counts OperationsFailed', async () => {
    const record = await startTask();
    written.length = 0;
    await app.statusSync(statusEvent(record, 'FAILED', 0));
    const failed = metric('OperationsFailed', 'Count', ['service', 'tool', 'dialect']);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ tool: 'job', dialect: 'tasks-2026-07-28', OperationsFailed: 1 });
    expect(metric('OperationsCompleted', 'Count', ['service', 'tool', 'dialect'])).toEqual([]);
  });

  it('a cancel counts OperationsCancelled once, and a second cancel counts nothing', async () => {
    const record = await startTask();
    written.length = 0;
    ok(await modernRequest(server.url, 'tasks/cancel', { taskId: record.token }, { capabilities: EXT, ...as }));
    await modernRequest(server.url, 'tasks/cancel', { taskId: record.token }, { capabilities: EXT, ...as });
    const cancelled = metric('OperationsCancelled', 'Count', ['service', 'tool', 'dialect']);
    expect(total(cancelled, 'OperationsCancelled')).toBe(1);
    expect(cancelled[0]).toMatchObject({ tool: 'job', dialect: 'tasks-2026-07-28' });
  });

  it('a question an execution asks counts InputRequired per tool (the built-in worker, as one invocation)', async () => {
    const token = `tok-${randomBytes(6).toString('hex')}`;
    ok(
      await legacyRequest(
        server.url,
        'tools/call',
        { name: 'report', arguments: {}, operation: { token }, _meta: { 'io.modelcontextprotocol/clientCapabilities': SEP } },
        as,
      ),
    );
    const key = { ownerId: ownerIdFor(PRINCIPAL), token };
    const record = await app.operations.readLive(key);
    written.length = 0;
    const question = { method: 'elicitation/create', params: { message: 'Go?', requestedSchema: { type: 'object', properties: {} } } };
    await observeInvocation(metrics)(undefined, () =>
      app.operations.inputs.ask({ operation: key, executionName: record.executionName, key: 'go', request: question, taskToken: 't1' }),
    );
    await observeInvocation(metrics)(undefined, () =>
      app.operations.inputs.ask({ operation: key, executionName: record.executionName, key: 'again', request: question, taskToken: 't2' }),
    );
    const asked = metric('InputRequired', 'Count', ['service', 'tool']);
    expect(total(asked, 'InputRequired')).toBe(2);
    expect(asked.every((line) => line.tool === 'report')).toBe(true);
  });

  it('one flush writes one line per set of dimension values, and nothing when nothing was recorded', () => {
    const recorder = createEmfMetrics();
    recorder.flush();
    expect(emfLines()).toEqual([]);
    recorder.count('Polls', { dialect: 'sep-1391' });
    recorder.count('Polls', { dialect: 'sep-1391' });
    recorder.count('Polls', { dialect: 'tasks-2025-11-25' });
    recorder.flush();
    const lines = metric('Polls', 'Count', ['service', 'dialect']);
    expect(lines.map((line) => [line.dialect, line.Polls])).toEqual([
      ['sep-1391', 2],
      ['tasks-2025-11-25', 1],
    ]);
  });

  it("the MCP Lambda flushes once the response stream has ended, inside a context named by the invocation's request id", async () => {
    const order: string[] = [];
    const seen: Array<string | undefined> = [];
    const stream = new Writable({ write: (_chunk, _encoding, done) => done() });
    stream.on('finish', () => order.push('response ended'));
    const runtime: LambdaStreamingRuntime = { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (responseStream) => responseStream } };
    const handler = streamingFunctionUrlHandler(
      async () => {
        seen.push(requestLogFields()?.function_request_id);
        // A poll counted while the body is still being written (as an SSE stream would).
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            metrics.count('Polls', { dialect: 'sep-1391' });
            seen.push(requestLogFields()?.function_request_id);
            controller.enqueue(new TextEncoder().encode('{}'));
            controller.close();
          },
        });
        return new Response(body);
      },
      runtime,
      async (context, invocation) => {
        await observeInvocation(metrics)(context, invocation);
        order.push(emfLines().length > 0 ? 'metrics written' : 'nothing written');
      },
    );
    const event = {
      rawPath: '/mcp',
      rawQueryString: '',
      headers: {},
      isBase64Encoded: false,
      requestContext: { domainName: 'x.lambda-url.us-east-1.on.aws', http: { method: 'GET' } },
    };
    await handler(event as never, stream as unknown as ResponseStream, { awsRequestId: 'lambda-req-1' });
    expect(order).toEqual(['response ended', 'metrics written']);
    expect(seen).toEqual(['lambda-req-1', 'lambda-req-1']);
    expect(metric('Polls', 'Count', ['service', 'dialect'])).toMatchObject([{ dialect: 'sep-1391', Polls: 1 }]);
  });
});
