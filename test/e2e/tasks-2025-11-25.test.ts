/**
 * 2025-11-25 tasks (SEP-1686) against the local stack: raw JSON-RPC for the wire rules
 * and the v1 SDK Client's experimental tasks API for the real-client flow. Test names
 * quote the 2025-11-25 tasks specification where it says MUST.
 */
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { DescribeExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import {
  CallToolResultV1Schema,
  CancelTaskResultV1Schema,
  CreateTaskResultV1Schema,
  GetTaskResultV1Schema,
  ListTasksResultV1Schema,
  ServerCapabilitiesV1Schema,
  ToolV1Schema,
} from '@modelcontextprotocol/ext-tasks/core/v1';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatsOf } from '../support/expected-stats.ts';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { LIST_PAGE_SIZE } from '../../lambdas/mcp/dialects/tasks-2025-11-25.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-service.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { startTestStackWithSfn, stopTestStack } from '../support/local-stack-fixture.ts';
import { jsonRpcMessagesOf, legacyRequest, modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus, rpcError } from '../support/rpc-assertions.ts';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

let stack: LocalStack;
let sfn: SFNClient;

beforeAll(async () => {
  // Handle tools off: this file checks what a client without async support sees when the server serves none.
  ({ stack, sfn } = await startTestStackWithSfn({ handleTools: false }));
});
afterAll(async () => {
  await stopTestStack({ stack, sfn });
});

const request = (method: string, params: Record<string, unknown> = {}, options: CallOptions & { version?: string } = {}) =>
  legacyRequest(stack.url, method, params, options);
const callAsTask = (name: string, args: Record<string, unknown>, task: Record<string, unknown> = {}, options: CallOptions = {}) =>
  request('tools/call', { name, arguments: args, task }, options);
const getTask = (taskId: string, options: CallOptions = {}) => request('tasks/get', { taskId }, options);
const taskResult = (taskId: string, options: CallOptions = {}) => request('tasks/result', { taskId }, options);

async function startTask(name: string, args: Record<string, unknown>, task: Record<string, unknown> = {}, options: CallOptions = {}) {
  const created = ok(await callAsTask(name, args, task, options));
  expect(CreateTaskResultV1Schema.safeParse(created).success).toBe(true);
  return created.task.taskId as string;
}

function pollUntilTerminal(taskId: string, options: CallOptions = {}) {
  return pollUntilStatus(() => getTask(taskId, options), ['completed', 'failed', 'cancelled']);
}

describe('capabilities and tools/list', () => {
  it('Servers that support task-augmented requests MUST declare a tasks capability during initialization', async () => {
    const init = ok(await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }));
    expect(init.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    expect(ServerCapabilitiesV1Schema.safeParse(init.capabilities).success).toBe(true);
  });

  it('tools declare support for tasks via execution.taskSupport: sync forbidden, async required, both optional', async () => {
    const tools = ok(await request('tools/list')).tools as Array<{ name: string; execution?: { taskSupport: string } }>;
    for (const tool of tools) expect(ToolV1Schema.safeParse(tool).success).toBe(true);
    expect(Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]))).toEqual({
      analyze_dataset: 'required',
      approve_deployment: 'required',
      approve_deployment_durable: 'required',
      count_primes_durable: 'optional',
      export_dataset: 'required',
      quick_calculation: 'forbidden',
      run_test_suite: 'optional',
      summarize_numbers: 'required',
    });
  });

  it('older revisions see neither async-only tools nor execution', async () => {
    const tools = ok(await request('tools/list', {}, { version: '2025-06-18' })).tools as Array<Record<string, unknown>>;
    expect(tools.map((t) => t.name)).toEqual(['count_primes_durable', 'quick_calculation', 'run_test_suite']);
    expect(tools.some((t) => 'execution' in t)).toBe(false);
  });

  it('If execution.taskSupport is "required", Servers MUST return a -32601 (Method not found) error if a client does not attempt to do so', async () => {
    const response = await request('tools/call', { name: 'analyze_dataset', arguments: { rows: 10 } });
    expect(rpcError(response)).toMatchObject({ code: -32601, message: expect.stringContaining('params.task') });
  });

  it('If execution.taskSupport is "forbidden", Servers SHOULD return a -32601 (Method not found) error if a client attempts a task', async () => {
    const response = await callAsTask('quick_calculation', { a: 1, b: 2, op: 'add' }, { ttl: 1000 });
    expect(rpcError(response)).toMatchObject({ code: -32601, message: expect.stringContaining('forbidden') });
  });

  it('If execution.taskSupport is "optional", clients MAY invoke the tool as a normal request: it runs synchronously', async () => {
    const result = ok(await request('tools/call', { name: 'run_test_suite', arguments: { suite: 'plain', tests: 2, failures: 0, durationSeconds: 0 } }));
    expect(result.structuredContent).toEqual({ suite: 'plain', passed: 2, failed: 0, durationSeconds: 0 });
    expect(result.task).toBeUndefined();
  });

  it('the 2026-07-28 wire ignores params.task: it never makes a task there', async () => {
    const response = await modernRequest(stack.url, 'tools/call', {
      name: 'run_test_suite',
      arguments: { suite: 'm', tests: 1, failures: 0, durationSeconds: 0 },
      task: {},
    });
    expect(ok(response)).toMatchObject({ resultType: 'complete', structuredContent: { suite: 'm' } });
  });
});

describe('creating tasks', () => {
  it('Receivers that accept a task-augmented request MUST return a CreateTaskResult: { task } with ttl and pollInterval in ms', async () => {
    const created = ok(await callAsTask('analyze_dataset', { rows: 10, delaySeconds: 30 }, { ttl: 60_000 }));
    expect(CreateTaskResultV1Schema.safeParse(created).success).toBe(true);
    expect(created.task).toMatchObject({ status: 'working', statusMessage: expect.any(String), ttl: 60_000, pollInterval: 2000 });
    expect(Buffer.from(created.task.taskId, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(created.task.createdAt).toMatch(/Z$/);
    expect(created._meta['io.modelcontextprotocol/model-immediate-response']).toContain(created.task.taskId);
  });

  it('Receivers MAY override the requested ttl duration: rounded up to seconds, clamped by the server bound, defaulted by the tool', async () => {
    const ttlOf = async (task: Record<string, unknown>) => ok(await callAsTask('analyze_dataset', { rows: 10, delaySeconds: 30 }, task)).task.ttl;
    expect(await ttlOf({ ttl: 1500 })).toBe(2000);
    expect(await ttlOf({ ttl: 10 ** 12 })).toBe(604_800_000);
    expect(await ttlOf({})).toBe(3_600_000);
    expect(rpcError(await callAsTask('analyze_dataset', { rows: 10 }, { ttl: -1 }))).toMatchObject({
      code: -32602,
      message: expect.stringContaining('task.ttl'),
    });
  });
});

describe('tasks/get and tasks/result', () => {
  it('tasks/get returns the Task', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 });
    const task = ok(await getTask(taskId));
    expect(GetTaskResultV1Schema.safeParse(task).success).toBe(true);
    expect(task).toMatchObject({ taskId, status: 'working', ttl: 3_600_000, pollInterval: 2000 });
    expect(task._meta?.[RELATED_TASK]).toBeUndefined();
  });

  it('tasks/result MUST block the response until the task reaches a terminal status, then return the result with related-task _meta', async () => {
    const taskId = await startTask('run_test_suite', { suite: 'blocking', tests: 4, failures: 1, durationSeconds: 2 });
    const started = Date.now();
    const result = ok(await taskResult(taskId));
    expect(Date.now() - started).toBeGreaterThan(1000);
    expect(CallToolResultV1Schema.safeParse(result).success).toBe(true);
    expect(result.structuredContent).toEqual({ suite: 'blocking', passed: 3, failed: 1, durationSeconds: 2 });
    expect(result._meta[RELATED_TASK]).toEqual({ taskId });
    expect(ok(await getTask(taskId)).status).toBe('completed');
  });

  it('a tool failure is status failed, and tasks/result returns its isError result', async () => {
    const taskId = await startTask('run_test_suite', { suite: 'boom', tests: 3, failures: 0, durationSeconds: 0, crash: true });
    const done = await pollUntilTerminal(taskId);
    expect(done).toMatchObject({ status: 'failed', statusMessage: expect.stringContaining('TestSuiteCrashed') });
    const result = ok(await taskResult(taskId));
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/Error: TestSuiteCrashed/);
    expect(result._meta[RELATED_TASK]).toEqual({ taskId });
  });

  it('If the underlying request resulted in a JSON-RPC error, tasks/result MUST return that same JSON-RPC error', async () => {
    const taskId = await startTask('run_test_suite', { suite: 'bad', tests: 1, failures: 5, durationSeconds: 0 });
    expect((await pollUntilTerminal(taskId)).status).toBe('failed');
    expect(rpcError(await taskResult(taskId))).toEqual({ code: -32602, message: 'Invalid arguments: failures must not exceed tests' });
  });

  it('Invalid or nonexistent taskId in tasks/get, tasks/result, or tasks/cancel: -32602', async () => {
    const notFound = { code: -32602, message: 'Failed to retrieve task: Task not found' };
    expect(rpcError(await getTask('no-such-task'))).toEqual(notFound);
    expect(rpcError(await taskResult('no-such-task'))).toEqual(notFound);
    expect(rpcError(await request('tasks/cancel', { taskId: 'no-such-task' }))).toEqual(notFound);
  });

  it('receivers MUST reject tasks/get, tasks/result, and tasks/cancel for tasks of another authorization context', async () => {
    const alice = { headers: { authorization: 'Bearer alice' } };
    const bob = { headers: { authorization: 'Bearer bob' } };
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 }, {}, alice);
    expect(ok(await getTask(taskId, alice)).status).toBe('working');
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      expect(rpcError(await request(method, { taskId }, bob))).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    }
    expect(ok(await getTask(taskId, alice)).status).toBe('working');
  });

  it('After a task\'s ttl has elapsed it is gone: tasks/get and tasks/result say "Task has expired"', async () => {
    const taskId = await startTask('run_test_suite', { suite: 'short', tests: 1, failures: 0, durationSeconds: 0 }, { ttl: 1000 });
    expect((await pollUntilTerminal(taskId)).status).toBe('completed');
    await new Promise((r) => setTimeout(r, 2100));
    const expired = { code: -32602, message: 'Failed to retrieve task: Task has expired' };
    expect(rpcError(await getTask(taskId))).toEqual(expired);
    expect(rpcError(await taskResult(taskId))).toEqual(expired);
    const listed = ok(await request('tasks/list')).tasks as Array<{ taskId: string }>;
    expect(listed.map((t) => t.taskId)).not.toContain(taskId);
  });

  it('tasks/result waits no longer than the server bound, then answers -32602 saying the task is still working', async () => {
    const app = createAsyncMcpApp({
      store: new InMemoryRecordStore(),
      engine: new FakeWorkflowEngine(),
      catalog: stack.catalog,
      secretKey: TEST_SECRET_KEY,
      limits: { ...DEFAULT_LIMITS, maxBlockingSeconds: 1 },
      logger: { error: () => undefined, warn: () => undefined },
    });
    const post = async (method: string, params: Record<string, unknown>) => {
      const response = await app.fetch(
        new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        }),
        'someone',
      );
      return jsonRpcMessagesOf(await response.text())[0];
    };
    const created = await post('tools/call', { name: 'analyze_dataset', arguments: { rows: 10 }, task: {} });
    const taskId = created.result.task.taskId;
    const started = Date.now();
    const answer = await post('tasks/result', { taskId });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(answer.error).toEqual({
      code: -32602,
      message: 'Task is still working after 1 s: call tasks/result again, or poll tasks/get until it is terminal',
      data: { taskId, status: 'working' },
    });
    expect((await post('tasks/get', { taskId })).result.status).toBe('working');
  });
});

describe('tasks/list', () => {
  it("is paginated newest first, shows only the caller's tasks, and no operations of other dialects", async () => {
    const lister = { headers: { authorization: 'Bearer lister' } };
    const created: string[] = [];
    for (let i = 0; i < LIST_PAGE_SIZE + 1; i++) {
      created.push(await startTask('run_test_suite', { suite: `s${i}`, tests: 1, failures: 0, durationSeconds: 0 }, {}, lister));
    }
    // Same principal, other dialects: a SEP-1391 operation, a Tasks extension task, a synchronous run.
    await request(
      'tools/call',
      { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 30 }, operation: { token: `tok-${crypto.randomUUID()}` } },
      lister,
    );
    await modernRequest(
      stack.url,
      'tools/call',
      { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 30 } },
      {
        capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        ...lister,
      },
    );
    await request('tools/call', { name: 'run_test_suite', arguments: { suite: 'sync', tests: 1, failures: 0, durationSeconds: 0 } }, lister);

    const first = ok(await request('tasks/list', {}, lister));
    expect(ListTasksResultV1Schema.safeParse(first).success).toBe(true);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = ok(await request('tasks/list', { cursor: first.nextCursor }, lister));
    expect(ListTasksResultV1Schema.safeParse(second).success).toBe(true);
    expect(second.nextCursor).toBeUndefined();

    const listed = [...first.tasks, ...second.tasks] as Array<{ taskId: string; createdAt: string }>;
    expect(first.tasks.length).toBeLessThanOrEqual(LIST_PAGE_SIZE);
    expect(listed.map((t) => t.taskId).sort()).toEqual([...created].sort());
    const times = listed.map((t) => Date.parse(t.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const other = ok(await request('tasks/list', {}, { headers: { authorization: 'Bearer someone-else' } }));
    expect(other.tasks).toEqual([]);
  });

  it('Invalid or nonexistent cursor in tasks/list: -32602', async () => {
    expect(rpcError(await request('tasks/list', { cursor: 'not-a-cursor' })).code).toBe(-32602);
  });
});

describe('tasks/cancel', () => {
  it('tasks/cancel returns the Task in cancelled status, stops the execution, and tasks/result then says so', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 600 });
    const cancelled = ok(await request('tasks/cancel', { taskId }));
    expect(CancelTaskResultV1Schema.safeParse(cancelled).success).toBe(true);
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
    expect(ok(await getTask(taskId)).status).toBe('cancelled');
    const record = await stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token: taskId });
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: record.executionArn! }));
    expect(execution.status).toBe('ABORTED');
    expect(rpcError(await taskResult(taskId))).toEqual({ code: -32602, message: 'Task was cancelled' });
  });

  it('Receivers MUST reject cancellation requests for tasks already in a terminal status with error code -32602', async () => {
    const taskId = await startTask('run_test_suite', { suite: 'done', tests: 1, failures: 0, durationSeconds: 0 });
    expect((await pollUntilTerminal(taskId)).status).toBe('completed');
    expect(rpcError(await request('tasks/cancel', { taskId }))).toEqual({
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'completed'",
    });
    expect(ok(await getTask(taskId)).status).toBe('completed');
  });
});

describe('the v1 SDK Client (experimental tasks)', () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'e2e-tasks-v1', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(stack.url));
    await client.listTools();
  });
  afterAll(async () => {
    await client?.close();
  });

  it('callToolStream on analyze_dataset: taskCreated, taskStatus, then the correct statistics', async () => {
    const types: string[] = [];
    let result: { structuredContent?: Record<string, number> } | undefined;
    const stream = client.experimental.tasks.callToolStream({ name: 'analyze_dataset', arguments: { rows: 150_001, seed: 5 } }, undefined, {
      task: { ttl: 60_000 },
    });
    for await (const message of stream) {
      types.push(message.type);
      if (message.type === 'error') throw message.error;
      if (message.type === 'result') result = message.result as typeof result;
    }
    expect(types[0]).toBe('taskCreated');
    expect(types).toContain('taskStatus');
    expect(types.at(-1)).toBe('result');
    const stats = result!.structuredContent!;
    expectStatsOf(stats, 150_001, 5);
  });

  it('getTask, listTasks and cancelTask work', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 600 });
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'working' });
    const { tasks } = await client.experimental.tasks.listTasks();
    expect(tasks.map((t) => t.taskId)).toContain(taskId);
    expect(await client.experimental.tasks.cancelTask(taskId)).toMatchObject({ taskId, status: 'cancelled' });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
  });
});
