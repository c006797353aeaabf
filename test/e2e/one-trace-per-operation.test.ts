/**
 * One trace per operation (DESIGN §5b), as a user turns it on: `npm start` in its own process
 * with OpenTelemetry's standard environment pointing at an OTLP/HTTP receiver in this test.
 * Each call carries a `traceparent` in `_meta` (SEP-414); every span of its operation (the
 * request, the execution, each worker or durable step, the question asked and answered,
 * status sync's end) is in the caller's trace or links to it, with the right parents, and no
 * argument value is in any attribute. A later poll has its own parent and links to the trace.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { initialize } from '../support/input-stack.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { openStream, postAnswer } from '../support/sse-reader.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const CAN_ASK = { elicitation: {}, ...TASKS };
const SERVER = 2;
const END_ATTRIBUTE = 'async_mcp.operation.status';

interface ServerProcess {
  url: URL;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** `npm start` as a child process, with the given OpenTelemetry environment. */
async function startServer(otel: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, ...otel },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((done) => child.on('exit', done));
  const url = await vi.waitFor(
    () => {
      const match = /serving MCP at (\S+)/.exec(stdout);
      if (!match) throw new Error(`not serving yet: ${stderr}`);
      return new URL(match[1] as string);
    },
    { timeout: 60_000, interval: 100 },
  );
  return {
    url,
    child,
    output: () => stdout + stderr,
    stop: async () => {
      // SIGTERM: the server stops and its SDK exports the spans still batched.
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A caller's span: a fresh trace id and span id, as a host that traces would send. */
function callerContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** The spans of one trace, and those of other traces that link to it. */
function spansOf(receiver: OtlpReceiver, traceId: string) {
  const inTrace = receiver.spans.filter((span) => span.traceId === traceId);
  const linked = receiver.spans.filter((span) => span.traceId !== traceId && span.links.some((link) => link.traceId === traceId));
  return { inTrace, linked };
}

/** Waits until status sync's terminal span of the trace has been exported, and a little longer for its neighbours. */
async function untilEnded(receiver: OtlpReceiver, traceId: string): Promise<void> {
  await vi.waitFor(() => expect(receiver.spans.some((span) => span.traceId === traceId && span.attributes[END_ATTRIBUTE] !== undefined)).toBe(true), {
    timeout: 30_000,
    interval: 100,
  });
  await new Promise((done) => setTimeout(done, 600));
}

/** Every name and attribute value of every span, as text, to look for argument values in. */
function attributeText(spans: readonly ReceivedSpan[]): string {
  return JSON.stringify(spans.map((span) => [span.name, span.attributes]));
}

function only(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const named = spans.filter((span) => span.name === name);
  expect(named.map((span) => span.name)).toEqual([name]);
  return named[0] as ReceivedSpan;
}

/**
 * What every operation's trace holds: the request span, the child of the caller's span, with
 * the MCP conventions' name and attributes; the execution, its child; status sync's end, also
 * its child (the start's span context is what the operation keeps).
 */
function expectOperationTrace(
  spans: readonly ReceivedSpan[],
  caller: { spanId: string },
  tool: string,
  version: string,
): { request: ReceivedSpan; execution: ReceivedSpan } {
  const request = only(spans, `tools/call ${tool}`);
  expect(request.kind).toBe(SERVER);
  expect(request.parentSpanId).toBe(caller.spanId);
  expect(request.attributes).toMatchObject({
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': tool,
    'gen_ai.operation.name': 'execute_tool',
    'mcp.protocol.version': version,
  });
  expect(typeof request.attributes['jsonrpc.request.id']).toBe('string');
  const execution = only(spans, `execution ${tool}`);
  expect(execution.parentSpanId).toBe(request.spanId);
  const ends = spans.filter((span) => span.name === 'status sync' && span.attributes[END_ATTRIBUTE] !== undefined);
  expect(ends).toHaveLength(1);
  expect(ends[0]?.parentSpanId).toBe(request.spanId);
  expect(ends[0]?.attributes[END_ATTRIBUTE]).toBe('completed');
  return { request, execution };
}

/** The Tasks extension (2026-07-28) and 2025-11-25 tasks, each driven the way its clients drive it. */
interface DialectDriver {
  version: string;
  /** Starts a task with `traceparent` in `_meta`; returns its id. */
  start(tool: string, args: Record<string, unknown>, traceparent: string): Promise<string>;
  /** Polls it (each poll with its own caller's `traceparent`) until it ends; returns its status. */
  untilEnd(taskId: string, traceparent: string): Promise<string>;
  /** Answers its one open question with `comment`, from a request with `traceparent`. */
  answer(taskId: string, comment: string, traceparent: string): Promise<void>;
}

function tasksExtension(url: () => URL): DialectDriver {
  const request = (method: string, params: Record<string, unknown>, traceparent: string) =>
    modernRequest(url(), method, { ...params, _meta: { traceparent } }, { capabilities: CAN_ASK });
  return {
    version: '2026-07-28',
    async start(tool, args, traceparent) {
      const created = ok(await request('tools/call', { name: tool, arguments: args }, traceparent));
      expect(created.resultType).toBe('task');
      return created.taskId as string;
    },
    async untilEnd(taskId, traceparent) {
      const done = await pollUntilStatus(() => request('tasks/get', { taskId }, traceparent), ['completed', 'failed', 'cancelled'], { timeout: 30_000 });
      return done.status as string;
    },
    async answer(taskId, comment, traceparent) {
      const waiting = await pollUntilStatus(() => request('tasks/get', { taskId }, traceparent), ['input_required'], { timeout: 30_000 });
      const [key] = Object.keys(waiting.inputRequests ?? {});
      ok(await request('tasks/update', { taskId, inputResponses: { [key as string]: { action: 'accept', content: { comment } } } }, traceparent));
    },
  };
}

function tasks20251125(url: () => URL): DialectDriver {
  let session: Record<string, string> | undefined;
  const headers = async () => {
    session ??= { 'mcp-session-id': (await initialize(url(), { elicitation: {} })) as string };
    return session;
  };
  const request = async (method: string, params: Record<string, unknown>, traceparent: string) =>
    legacyRequest(url(), method, { ...params, _meta: { traceparent } }, { headers: await headers() });
  return {
    version: '2025-11-25',
    async start(tool, args, traceparent) {
      return ok(await request('tools/call', { name: tool, arguments: args, task: {} }, traceparent)).task.taskId as string;
    },
    async untilEnd(taskId, traceparent) {
      const done = await pollUntilStatus(() => request('tasks/get', { taskId }, traceparent), ['completed', 'failed', 'cancelled'], { timeout: 30_000 });
      return done.status as string;
    },
    async answer(taskId, comment, traceparent) {
      await pollUntilStatus(() => request('tasks/get', { taskId }, traceparent), ['input_required'], { timeout: 30_000 });
      // The question comes on tasks/result's stream; the answer is the client's response to it.
      const stream = await openStream(
        url(),
        { jsonrpc: '2.0', id: `result-${taskId}`, method: 'tasks/result', params: { taskId, _meta: { traceparent } } },
        await headers(),
      );
      const question = await stream.next();
      expect(question.method).toBe('elicitation/create');
      // A response has no _meta of its own to carry the context: the HTTP traceparent header does.
      const answered = await postAnswer(
        url(),
        { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { comment } } },
        { ...(await headers()), traceparent },
      );
      expect(answered.status).toBe(202);
      await stream.cancel();
    },
  };
}

let receiver: OtlpReceiver;
let server: ServerProcess;

describe('with OTEL_EXPORTER_OTLP_ENDPOINT and http/json', () => {
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    server = await startServer({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'async-mcp-trace-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  describe.each([
    ['the Tasks extension', tasksExtension],
    ['2025-11-25 tasks', tasks20251125],
  ])('%s', (_, driverFor) => {
    const driver = driverFor(() => server.url);

    it('analyze_dataset: the request, the execution, each worker and status sync are one trace; a poll has its own parent and links to it', async () => {
      const caller = callerContext();
      const poller = callerContext();
      const taskId = await driver.start('analyze_dataset', { rows: 4321, seed: 97 }, caller.traceparent);
      expect(await driver.untilEnd(taskId, poller.traceparent)).toBe('completed');
      await untilEnded(receiver, caller.traceId);
      const { inTrace } = spansOf(receiver, caller.traceId);
      const { request, execution } = expectOperationTrace(inTrace, caller, 'analyze_dataset', driver.version);
      const workers = inTrace.filter((span) => span.name.startsWith('invoke '));
      expect(workers.map((span) => span.name)).toEqual(expect.arrayContaining(['invoke plan_dataset_chunks', 'invoke merge_chunk_stats']));
      for (const worker of workers) expect(worker.parentSpanId).toBe(execution.spanId);
      // The polls: each the child of its own caller's span, linked to the operation's start.
      const polls = receiver.spans.filter((span) => span.traceId === poller.traceId && span.name === 'tasks/get');
      expect(polls.length).toBeGreaterThan(0);
      for (const poll of polls) {
        expect(poll.parentSpanId).toBe(poller.spanId);
        expect(poll.links).toContainEqual({ traceId: caller.traceId, spanId: request.spanId });
      }
      expect(attributeText([...inTrace, ...polls])).not.toMatch(/4321|"97"/);
    });

    it('approve_deployment, answered: the question asked is a span of the asking worker, the answer a span of the operation linked to the answering request', async () => {
      const caller = callerContext();
      const answerer = callerContext();
      const secretComment = `ship it ${randomBytes(6).toString('hex')}`;
      const args = { environment: 'staging-zq', changes: ['api: v9.8.7-zq', 'db: index zq_orders'] };
      const taskId = await driver.start('approve_deployment', args, caller.traceparent);
      await driver.answer(taskId, secretComment, answerer.traceparent);
      expect(await driver.untilEnd(taskId, answerer.traceparent)).toBe('completed');
      await untilEnded(receiver, caller.traceId);
      const { inTrace } = spansOf(receiver, caller.traceId);
      const { request, execution } = expectOperationTrace(inTrace, caller, 'approve_deployment', driver.version);
      const asking = inTrace.filter((span) => span.name === 'invoke request_input');
      expect(asking).toHaveLength(1);
      expect(asking[0]?.parentSpanId).toBe(execution.spanId);
      const asked = only(inTrace, 'question asked');
      expect(asked.parentSpanId).toBe(asking[0]?.spanId);
      const answered = only(inTrace, 'question answered');
      expect(answered.parentSpanId).toBe(request.spanId);
      const answering = receiver.spans.filter((span) => span.traceId === answerer.traceId && span.kind === SERVER);
      expect(answered.links.map((link) => link.traceId)).toEqual([answerer.traceId]);
      expect(answering.map((span) => span.spanId)).toContain(answered.links[0]?.spanId);
      const all = [...inTrace, ...receiver.spans.filter((span) => span.traceId === answerer.traceId)];
      expect(attributeText(all)).not.toContain('staging-zq');
      expect(attributeText(all)).not.toContain('zq_orders');
      expect(attributeText(all)).not.toContain(secretComment);
    });

    it('count_primes_durable: each invocation of the durable function and each step is in the trace', async () => {
      const caller = callerContext();
      const poller = callerContext();
      const taskId = await driver.start('count_primes_durable', { below: 7919, chunks: 2, pauseSeconds: 1 }, caller.traceparent);
      expect(await driver.untilEnd(taskId, poller.traceparent)).toBe('completed');
      await untilEnded(receiver, caller.traceId);
      const { inTrace } = spansOf(receiver, caller.traceId);
      const { execution } = expectOperationTrace(inTrace, caller, 'count_primes_durable', driver.version);
      const invocations = inTrace.filter((span) => span.name.startsWith('invoke '));
      // The pause ends one invocation: the function is invoked again after it.
      expect(invocations.length).toBeGreaterThanOrEqual(2);
      for (const invocation of invocations) expect(invocation.parentSpanId).toBe(execution.spanId);
      const steps = inTrace.filter((span) => span.name.startsWith('step '));
      expect(steps.length).toBeGreaterThanOrEqual(2);
      const invocationIds = invocations.map((span) => span.spanId);
      for (const step of steps) expect(invocationIds).toContain(step.parentSpanId);
      expect(attributeText(inTrace)).not.toContain('7919');
    });
  });

  it('quick_calculation, a sync tool called without a task: its EXPRESS execution is the child of the request', async () => {
    const caller = callerContext();
    const answered = await modernRequest(
      server.url,
      'tools/call',
      { name: 'quick_calculation', arguments: { a: 6007, b: 3, op: 'mul' }, _meta: { traceparent: caller.traceparent } },
      { capabilities: {} },
    );
    expect(ok(answered).isError).toBeFalsy();
    await vi.waitFor(() => expect(receiver.spans.some((span) => span.traceId === caller.traceId && span.name === 'execution quick_calculation')).toBe(true), {
      timeout: 30_000,
      interval: 100,
    });
    const { inTrace } = spansOf(receiver, caller.traceId);
    const request = only(inTrace, 'tools/call quick_calculation');
    expect(request.parentSpanId).toBe(caller.spanId);
    const execution = only(inTrace, 'execution quick_calculation');
    expect(execution.parentSpanId).toBe(request.spanId);
    expect(attributeText(inTrace)).not.toContain('6007');
  });

  // The notice (the event appended, each webhook POST with its traceparent header) joins these
  // traces too: its checks go here, beside the operation's.
  // The webhook POST and its header need a signed-in principal: test/e2e/notice-in-operation-trace.test.ts.
  describe('the notice', () => {
    it("the end's event is a span under status sync's end, and events/poll gives it with that span's traceparent in _meta", async () => {
      const caller = callerContext();
      const poll = (cursor: unknown) =>
        modernRequest(server.url, 'events/poll', { name: 'operation.finished', arguments: { tool: 'analyze_dataset' }, cursor }, { capabilities: TASKS });
      const { cursor } = ok(await poll(null));
      const driver = tasksExtension(() => server.url);
      const taskId = await driver.start('analyze_dataset', { rows: 64 }, caller.traceparent);
      expect(await driver.untilEnd(taskId, caller.traceparent)).toBe('completed');
      await untilEnded(receiver, caller.traceId);
      const { inTrace } = spansOf(receiver, caller.traceId);
      const end = inTrace.find((span) => span.name === 'status sync' && span.attributes[END_ATTRIBUTE] !== undefined);
      const event = only(inTrace, 'event operation.finished');
      expect(event.parentSpanId).toBe(end?.spanId);
      // Polls read a few seconds behind now: the event comes on a later poll.
      const occurrence = await vi.waitFor(
        async () => {
          const { events } = ok(await poll(cursor));
          const ours = (events as { data: { operationId?: string }; _meta?: Record<string, string> }[]).find((e) => e.data.operationId === taskId);
          if (!ours) throw new Error('not polled yet');
          return ours;
        },
        { timeout: 20_000, interval: 500 },
      );
      expect(occurrence._meta?.traceparent).toBe(`00-${caller.traceId}-${event.spanId}-01`);
    });
  });
});

describe('with http/protobuf (the exporter default)', () => {
  let protoReceiver: OtlpReceiver;
  let protoServer: ServerProcess;
  beforeAll(async () => {
    protoReceiver = await startOtlpReceiver();
    protoServer = await startServer({ OTEL_EXPORTER_OTLP_ENDPOINT: protoReceiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' });
  }, 90_000);
  afterAll(async () => {
    await protoServer?.stop();
    await protoReceiver?.close();
  });

  it("exports the operation's spans as OTLP protobuf, in the caller's trace", async () => {
    const caller = callerContext();
    const driver = tasksExtension(() => protoServer.url);
    const taskId = await driver.start('analyze_dataset', { rows: 50 }, caller.traceparent);
    expect(await driver.untilEnd(taskId, caller.traceparent)).toBe('completed');
    // Bytes fields hold the ids raw: the caller's trace id, and the request span's name beside it.
    const traceIdBytes = Buffer.from(caller.traceId, 'hex');
    await vi.waitFor(
      () => {
        const bodies = protoReceiver.exports.filter(({ body }) => body.includes(traceIdBytes));
        expect(bodies.map(({ contentType }) => contentType)).toContain('application/x-protobuf');
        const text = Buffer.concat(bodies.map(({ body }) => body));
        for (const name of ['tools/call analyze_dataset', 'execution analyze_dataset', 'invoke plan_dataset_chunks', 'status sync']) {
          expect(text.includes(Buffer.from(name))).toBe(true);
        }
      },
      { timeout: 30_000, interval: 200 },
    );
  });
});
