/**
 * `subscriptions/listen` with the Tasks extension's `notifications.taskIds`, over raw HTTP
 * on the local stack: what the stream carries, whose tasks it agrees to, its limits, and
 * its graceful end before its deadline. Test names quote the extension's specification
 * (specification/draft/tasks.md) and the core's subscriptions pattern (2026-07-28).
 */
import { readAcceptedTaskIdsV2, contributeTaskFilterV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import { TaskStatusNotificationV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDeployedStack } from '../../local/as-deployed/index.ts';
import type { DeployedLocalStack } from '../../local/as-deployed/start-deployed-stack.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../support/deployed-assembly.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { MODERN_VERSION, modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';
import { openStream, type JsonRpcMessage, type OpenStream } from '../support/sse-reader.ts';

const EXTENSION = 'io.modelcontextprotocol/tasks';
const EXT = { extensions: { [EXTENSION]: {} } };
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const MAX_STREAM_MS = 1500;
const alice = { authorization: 'Bearer alice' };
const bob = { authorization: 'Bearer bob' };

let stack: LocalStack;
let nextId = 1;

beforeAll(async () => {
  // Short streams, so a test sees one end and the re-listen after it.
  stack = await startTestStack({ listen: { maxStreamMs: MAX_STREAM_MS, maxStreamsPerPrincipal: 2 } });
});
afterAll(async () => {
  await stack?.close();
});

/** Opens a 2026-07-28 listen stream with this filter. */
function listen(
  notifications: Record<string, unknown>,
  options: { capabilities?: Record<string, unknown>; headers?: Record<string, string>; id?: number; url?: URL } = {},
): Promise<OpenStream> {
  const body = {
    jsonrpc: '2.0',
    id: options.id ?? nextId++,
    method: 'subscriptions/listen',
    params: {
      notifications,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'listen-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? EXT,
      },
    },
  };
  return openStream(options.url ?? stack.url, body, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'subscriptions/listen', ...options.headers });
}

async function startTask(args: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const options: CallOptions = { capabilities: EXT, headers };
  const created = ok(await modernRequest(stack.url, 'tools/call', { name: 'run_test_suite', arguments: args }, options));
  expect(created.resultType).toBe('task');
  return created.taskId as string;
}

/** Messages until the listen request's own result ends the stream. */
async function untilEnd(stream: OpenStream): Promise<JsonRpcMessage[]> {
  const messages: JsonRpcMessage[] = [];
  for (;;) {
    const message = await stream.next();
    messages.push(message);
    if ('result' in message || 'error' in message) return messages;
  }
}

describe('subscriptions/listen with notifications.taskIds', () => {
  it("the acknowledgement names the caller's task; notifications/tasks carries working, then completed with the result inlined, as tasks/get returns it", async () => {
    const taskId = await startTask({ suite: 'listened', tests: 4, failures: 1, durationSeconds: 1 }, alice);
    const stream = await listen(contributeTaskFilterV2({}, [taskId]).notifications, { headers: alice, id: 7001 });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(stream.headers.get('x-accel-buffering')).toBe('no');

    // "The server MUST send notifications/subscriptions/acknowledged as the first message"
    const ack = await stream.next();
    expect(ack.method).toBe('notifications/subscriptions/acknowledged');
    expect(ack.params._meta[SUBSCRIPTION_ID]).toBe(7001);
    expect(readAcceptedTaskIdsV2(ack.params)).toEqual([taskId]);

    const messages = await untilEnd(stream);
    const notes = messages.filter((m) => m.method === 'notifications/tasks');
    // "notifications/progress and notifications/message notifications MUST NOT be sent on the subscriptions/listen stream"
    expect(messages.filter((m) => m.method && m.method !== 'notifications/tasks')).toEqual([]);
    for (const note of notes) {
      expect(TaskStatusNotificationV2Schema.safeParse(note).success).toBe(true);
      expect(note.params.taskId).toBe(taskId);
      expect(note.params._meta[SUBSCRIPTION_ID]).toBe(7001);
    }
    expect(notes[0]!.params.status).toBe('working');
    // The stream ends with the listen request's own result, when the task is final or its time is up.
    expect(messages.at(-1)).toMatchObject({ id: 7001, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: 7001 } } });
    // On a busy machine the task may outlast this short stream: listen again, as clients are told to.
    let last = notes.at(-1)!.params;
    for (let id = 7002; last.status !== 'completed' && id < 7022; id++) {
      const again = await listen({ taskIds: [taskId] }, { headers: alice, id });
      expect((await again.next()).method).toBe('notifications/subscriptions/acknowledged');
      last = (await untilEnd(again)).filter((m) => m.method === 'notifications/tasks').at(-1)!.params;
    }
    expect(last.status).toBe('completed');
    expect(last.result).toMatchObject({ structuredContent: { suite: 'listened', passed: 3, failed: 1, durationSeconds: 1 } });

    // "identical to what tasks/get would have returned at that moment"
    const got = ok(await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: EXT, headers: alice }));
    const { resultType: _resultType, _meta: _gotMeta, ...task } = got;
    const { _meta: _noteMeta, ...noted } = last;
    expect(noted).toEqual(task);
  });

  it("only the caller's own tasks are agreed to: another principal's task and unknown ids are left out alike", async () => {
    const mine = await startTask({ suite: 'mine', tests: 1, failures: 0, durationSeconds: 0 }, alice);
    const theirs = await startTask({ suite: 'theirs', tests: 1, failures: 0, durationSeconds: 30 }, bob);
    const stream = await listen({ taskIds: [theirs, 'no-such-task', mine] }, { headers: alice });
    const ack = await stream.next();
    expect(ack.params.notifications).toEqual({ taskIds: [mine] });
    const rest = await untilEnd(stream);
    expect(rest.filter((m) => m.method === 'notifications/tasks').every((m) => m.params.taskId === mine)).toBe(true);
    // Bob's task is his to listen to.
    const bobs = await listen({ taskIds: [theirs] }, { headers: bob });
    expect((await bobs.next()).params.notifications).toEqual({ taskIds: [theirs] });
    await bobs.cancel();
  });

  it('a request for task notifications without the extension gets -32021 naming it, with HTTP 400', async () => {
    const stream = await listen({ taskIds: ['any'] }, { capabilities: {} });
    expect(stream.status).toBe(400);
    const answer = await stream.next();
    expect(answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [EXTENSION]: {} } } } });
    expect(answer.error!.message).toContain(EXTENSION);
  });

  it('more than 100 task ids: -32602 naming params.notifications.taskIds', async () => {
    const stream = await listen({ taskIds: Array.from({ length: 101 }, (_, i) => `task-${i}`) });
    const answer = await stream.next();
    expect(answer.error).toMatchObject({ code: -32602, data: { field: 'params.notifications.taskIds' } });
    expect(answer.error!.message).toContain('params.notifications.taskIds');
  });

  it('toolsListChanged is not agreed to: the server cannot know its catalog changed (tools.listChanged is not declared)', async () => {
    const discovered = ok(await modernRequest(stack.url, 'server/discover'));
    expect(discovered.capabilities.tools?.listChanged).toBeUndefined();
    const stream = await listen({ toolsListChanged: true });
    const messages = await untilEnd(stream);
    expect(messages[0]!.params.notifications).toEqual({});
    expect(messages.at(-1)!.result).toMatchObject({ resultType: 'complete' });
  });

  it('the stream ends cleanly before its deadline, and a re-listen picks the task up where it is', async () => {
    const taskId = await startTask({ suite: 'long', tests: 1, failures: 0, durationSeconds: 30 });
    const opened = Date.now();
    const first = await listen({ taskIds: [taskId] }, { id: 7101 });
    const messages = await untilEnd(first);
    expect(Date.now() - opened).toBeLessThan(MAX_STREAM_MS + 5000);
    expect(messages.at(-1)).toMatchObject({ id: 7101, result: { resultType: 'complete' } });
    expect(messages.filter((m) => m.method === 'notifications/tasks').map((m) => m.params.status)).toEqual(['working']);

    const again = await listen({ taskIds: [taskId] }, { id: 7102 });
    expect((await again.next()).params.notifications).toEqual({ taskIds: [taskId] });
    expect((await again.next()).params).toMatchObject({ taskId, status: 'working' });
    await again.cancel();
    await modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: EXT });
  });

  it('a principal past its open-stream cap gets -32029 with HTTP 429; a closed stream frees its lease', async () => {
    const headers = { authorization: 'Bearer capped' };
    const taskId = await startTask({ suite: 'capped', tests: 1, failures: 0, durationSeconds: 30 }, headers);
    const open = [await listen({ taskIds: [taskId] }, { headers }), await listen({ taskIds: [taskId] }, { headers })];
    for (const stream of open) expect((await stream.next()).method).toBe('notifications/subscriptions/acknowledged');
    const refused = await listen({ taskIds: [taskId] }, { headers });
    expect(refused.status).toBe(429);
    expect((await refused.next()).error).toMatchObject({ code: -32029, data: { limit: 2 } });
    // Streams end by themselves before their deadline and give their leases back.
    await Promise.all(open.map((stream) => untilEnd(stream)));
    const later = await listen({ taskIds: [taskId] }, { headers });
    expect((await later.next()).method).toBe('notifications/subscriptions/acknowledged');
    await later.cancel();
    await modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: EXT, headers });
  });
});

// These three suites, each on a stack of its own, run at once after the one above: the other
// two start and finish while the as-deployed stream waits out its invocation's time.
describe.concurrent('subscriptions/listen turned off', () => {
  let off: LocalStack;
  beforeAll(async () => {
    off = await startTestStack({ listen: { enabled: false } });
  });
  afterAll(async () => {
    await off?.close();
  });

  it('ASYNC_MCP_LISTEN=0: subscriptions/listen is an unknown method (-32601, HTTP 404)', async () => {
    const response = await modernRequest(off.url, 'subscriptions/listen', { notifications: { taskIds: ['any'] } }, { capabilities: EXT });
    expect(response.status).toBe(404);
    expect(rpcError(response).code).toBe(-32601);
  });
});

describe.concurrent('as deployed: the bundled MCP function in its Lambda sandbox', () => {
  // The template's MCP timeout is over a minute; a stream ends 5 s before it, so 15 s still
  // shows the graceful end using the invocation's time, in a quarter of the wait.
  const MCP_TIMEOUT_SECONDS = 15;
  let deployed: DeployedLocalStack;
  beforeAll(async () => {
    const cdkOut = await deployedAssembly(NO_AUTH);
    const mcpLogicalId = loadDeployedStack(cdkOut).functionUrl?.targetFunctionLogicalId ?? '';
    ({ stack: deployed } = await startAssemblyStack(cdkOut, { functionTimeoutSeconds: { [mcpLogicalId]: MCP_TIMEOUT_SECONDS } }));
  }, 240_000);
  afterAll(async () => {
    await deployed?.close();
  });

  it("a listen stream ends cleanly before the function's timeout, and the client re-listens", async () => {
    const mcp = deployed.model.functions.find((f) => f.logicalId === deployed.model.functionUrl?.targetFunctionLogicalId);
    const timeoutMs = (mcp?.timeoutSeconds ?? 0) * 1000;
    expect(timeoutMs).toBe(MCP_TIMEOUT_SECONDS * 1000);
    const created = ok(
      await modernRequest(deployed.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 86_400 } }, { capabilities: EXT }),
    );
    const taskId = created.taskId as string;
    const opened = Date.now();
    const first = await listen({ taskIds: [taskId] }, { url: deployed.url, id: 7201 });
    expect(first.status).toBe(200);
    const messages = await untilEnd(first);
    const lasted = Date.now() - opened;
    expect(messages[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { taskIds: [taskId] } } });
    expect(messages[1]).toMatchObject({ method: 'notifications/tasks', params: { taskId, status: 'working' } });
    // The graceful end, not a cut: the listen request's own result, before the invocation's timeout.
    expect(messages.at(-1)).toMatchObject({ id: 7201, result: { resultType: 'complete' } });
    expect(lasted).toBeLessThan(timeoutMs);
    // It used the invocation's time, not a fixed short cap.
    expect(lasted).toBeGreaterThan(timeoutMs / 2);

    const again = await listen({ taskIds: [taskId] }, { url: deployed.url, id: 7202 });
    expect((await again.next()).params.notifications).toEqual({ taskIds: [taskId] });
    await again.cancel();
    await modernRequest(deployed.url, 'tasks/cancel', { taskId }, { capabilities: EXT });
  }, 180_000);
});

describe.concurrent('a task that asks for input', () => {
  // The run asks only a client that can answer an elicitation.
  const ASKABLE = { elicitation: {}, ...EXT };
  let inputs: LocalStack;
  beforeAll(async () => {
    inputs = await startTestStack({ toolsDir: 'test/fixtures/input-tools', handleTools: false });
  });
  afterAll(async () => {
    await inputs?.close();
  });

  it('notifications/tasks reports input_required with its inputRequests, then completed once tasks/update answers', async () => {
    const created = ok(await modernRequest(inputs.url, 'tools/call', { name: 'ask_confirm', arguments: { subject: 'the listen' } }, { capabilities: ASKABLE }));
    const taskId = created.taskId as string;
    const stream = await listen({ taskIds: [taskId] }, { url: inputs.url, capabilities: ASKABLE });
    expect((await stream.next()).params.notifications).toEqual({ taskIds: [taskId] });
    let note = await stream.next();
    while (note.params?.status !== 'input_required') note = await stream.next();
    expect(TaskStatusNotificationV2Schema.safeParse(note).success).toBe(true);
    expect(note.params.inputRequests).toEqual({
      confirm: {
        method: 'elicitation/create',
        params: { message: 'Go ahead with the listen?', requestedSchema: { type: 'object', properties: { comment: { type: 'string' } } } },
      },
    });
    ok(
      await modernRequest(
        inputs.url,
        'tasks/update',
        { taskId, inputResponses: { confirm: { action: 'accept', content: { comment: 'go' } } } },
        { capabilities: ASKABLE },
      ),
    );
    const rest = await untilEnd(stream);
    const last = rest.filter((m) => m.method === 'notifications/tasks').at(-1);
    expect(last?.params).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'confirmed: {"comment":"go"}' }] } });
    expect(last?.params).not.toHaveProperty('inputRequests');
  });
});
