/**
 * The MCP Tasks extension (io.modelcontextprotocol/tasks, 2026-07-28) against the local
 * stack: raw JSON-RPC for the wire rules, the v2 Client with the ext-tasks session for
 * the real-client flow. Test names quote the extension's specification where it says MUST.
 */
import { DescribeExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { CancelTaskResultV2Schema, CreateTaskResultV2Schema, GetTaskResultV2Schema, UpdateTaskResultV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatsOf } from '../support/expected-stats.ts';
import { captureLogs } from '../support/log-capture.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStackWithSfn, stopTestStack } from '../support/local-stack-fixture.ts';
import { MODERN_VERSION, modernDispatch, modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus, rpcError } from '../support/rpc-assertions.ts';

const EXTENSION = 'io.modelcontextprotocol/tasks';
const EXT = { extensions: { [EXTENSION]: {} } };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let stack: LocalStack;
let sfn: SFNClient;

beforeAll(async () => {
  // Handle tools off: this file checks what a request that does not declare the extension sees when the server serves none.
  ({ stack, sfn } = await startTestStackWithSfn({ handleTools: false }));
});
afterAll(async () => {
  await stopTestStack({ stack, sfn });
});

/** A request that declares the extension (unless told otherwise). */
function ext(method: string, params: Record<string, unknown> = {}, options: CallOptions = {}) {
  return modernRequest(stack.url, method, params, { capabilities: EXT, ...options });
}
const callTool = (name: string, args: Record<string, unknown>, options: CallOptions = {}) => ext('tools/call', { name, arguments: args }, options);
const getTask = (taskId: string, options: CallOptions = {}) => ext('tasks/get', { taskId }, options);

function pollUntilTerminal(taskId: string, options: CallOptions = {}) {
  return pollUntilStatus(() => getTask(taskId, options), ['completed', 'failed', 'cancelled']);
}

async function startTask(name: string, args: Record<string, unknown>, options: CallOptions = {}) {
  const created = ok(await callTool(name, args, options));
  expect(created.resultType).toBe('task');
  return created.taskId as string;
}

describe('capability negotiation', () => {
  it('server/discover advertises capabilities.extensions["io.modelcontextprotocol/tasks"] = {} and no v1 tasks slot', async () => {
    const discovered = ok(await modernRequest(stack.url, 'server/discover'));
    // Other extensions (MCP Events) are advertised beside it; this one's entry is {}.
    expect(discovered.capabilities.extensions[EXTENSION]).toEqual({});
    expect(discovered.capabilities.tasks).toBeUndefined();
  });

  it('a declaring request sees every tool, including async-only ones', async () => {
    const tools = ok(await ext('tools/list')).tools as Array<{ name: string }>;
    expect(tools.map((t) => t.name)).toEqual([
      'analyze_dataset',
      'approve_deployment',
      'approve_deployment_durable',
      'count_primes_durable',
      'export_dataset',
      'quick_calculation',
      'run_test_suite',
      'summarize_numbers',
    ]);
  });

  it('A server MUST NOT return CreateTaskResult to a client that did not include the extension capability: a both tool runs synchronously', async () => {
    const result = ok(
      await modernRequest(stack.url, 'tools/call', { name: 'run_test_suite', arguments: { suite: 'sync', tests: 3, failures: 1, durationSeconds: 0 } }),
    );
    expect(result.resultType).toBe('complete');
    expect(result.taskId).toBeUndefined();
    expect(result.structuredContent).toEqual({ suite: 'sync', passed: 2, failed: 1, durationSeconds: 0 });
  });

  it('an async-only tool without the extension: -32021 with data.requiredCapabilities and HTTP 400', async () => {
    const response = await modernRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10 } });
    expect(response.status).toBe(400);
    expect(rpcError(response)).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [EXTENSION]: {} } } },
    });
  });

  it('Servers MUST return -32021 for non-declaring clients issuing tasks/get, tasks/update, and tasks/cancel requests', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 });
    for (const [method, params] of [
      ['tasks/get', { taskId }],
      ['tasks/update', { taskId, inputResponses: {} }],
      ['tasks/cancel', { taskId }],
    ] as const) {
      const response = await modernRequest(stack.url, method, params);
      expect(response.status).toBe(400);
      expect(rpcError(response)).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [EXTENSION]: {} } } } });
    }
    // The refusal changed nothing: the task still runs.
    expect(ok(await getTask(taskId)).status).toBe('working');
  });

  it('tasks/result and tasks/list do not exist in this era: -32601 with HTTP 404', async () => {
    for (const [method, params] of [
      ['tasks/result', { taskId: 'anything' }],
      ['tasks/list', {}],
    ] as const) {
      const response = await ext(method, params);
      expect(response.status).toBe(404);
      expect(rpcError(response).code).toBe(-32601);
    }
  });
});

describe('task creation', () => {
  it('Servers MUST set resultType to "task" when returning a CreateTaskResult: a flat Result & Task', async () => {
    const before = Date.now();
    const created = ok(await callTool('analyze_dataset', { rows: 10, delaySeconds: 30 }));
    expect(CreateTaskResultV2Schema.safeParse(created).success).toBe(true);
    expect(created).toMatchObject({ resultType: 'task', status: 'working', statusMessage: expect.any(String), ttlMs: 3_600_000, pollIntervalMs: 2000 });
    expect(created.createdAt).toMatch(ISO);
    expect(created.lastUpdatedAt).toMatch(ISO);
    expect(Date.parse(created.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Number.isInteger(created.ttlMs) && Number.isInteger(created.pollIntervalMs)).toBe(true);
    for (const key of ['task', 'result', 'error', 'inputRequests', 'ttl', 'pollInterval', 'requestState']) expect(created).not.toHaveProperty(key);
  });

  it('Servers MUST generate task ids with sufficient entropy: 128 random bits, unique per call', async () => {
    const ids = await Promise.all([1, 2, 3].map(() => startTask('analyze_dataset', { rows: 10, delaySeconds: 30 })));
    for (const id of ids) expect(Buffer.from(id, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(new Set(ids).size).toBe(3);
  });

  it('A server MUST NOT return CreateTaskResult until a tasks/get for the returned taskId would resolve', async () => {
    const taskIds = await Promise.all(Array.from({ length: 5 }, () => startTask('analyze_dataset', { rows: 10, delaySeconds: 30 })));
    const tasks = await Promise.all(taskIds.map((taskId) => getTask(taskId)));
    expect(tasks.map((t) => ok(t).taskId)).toEqual(taskIds);
  });

  it('a sync tool returns a plain result with resultType "complete", and a legacy params.task hint never promotes it', async () => {
    for (const extra of [{}, { task: { ttl: 60_000, pollInterval: 100 } }]) {
      const result = ok(await ext('tools/call', { name: 'quick_calculation', arguments: { a: 6, b: 7, op: 'mul' }, ...extra }));
      expect(result).toMatchObject({ resultType: 'complete', structuredContent: { result: 42 } });
      expect(result.taskId).toBeUndefined();
    }
  });
});

describe('tasks/get', () => {
  it('If the status is working, the server MUST return a Task object with status working', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 });
    const task = ok(await getTask(taskId));
    expect(GetTaskResultV2Schema.safeParse(task).success).toBe(true);
    expect(task).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect(task).not.toHaveProperty('result');
  });

  it('If the status is completed, the server MUST return a result field containing the final result, with resultType "complete" and no related-task _meta', async () => {
    const taskId = await startTask('run_test_suite', { suite: 'unit', tests: 10, failures: 3, durationSeconds: 1 });
    const done = await pollUntilTerminal(taskId);
    expect(GetTaskResultV2Schema.safeParse(done).success).toBe(true);
    expect(done).toMatchObject({ resultType: 'complete', status: 'completed' });
    expect(done.result).toMatchObject({ resultType: 'complete', structuredContent: { suite: 'unit', passed: 7, failed: 3, durationSeconds: 1 } });
    expect(done.result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined();
    // Results stay readable any number of times until the task expires.
    expect(ok(await getTask(taskId)).result).toEqual(done.result);
  });

  it('The failed status MUST NOT be used for a tool result that completed with isError: true', async () => {
    const taskId = await startTask('run_test_suite', { suite: 'boom', tests: 3, failures: 0, durationSeconds: 0, crash: true });
    const done = await pollUntilTerminal(taskId);
    expect(GetTaskResultV2Schema.safeParse(done).success).toBe(true);
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBe(true);
    expect(done.result.content[0].text).toMatch(/Error: TestSuiteCrashed/);
    expect(done).not.toHaveProperty('error');
  });

  it('failed: the tasks/get response MUST include the error field with the JSON-RPC error', async () => {
    const taskId = await startTask('run_test_suite', { suite: 'bad', tests: 1, failures: 5, durationSeconds: 0 });
    const done = await pollUntilTerminal(taskId);
    expect(GetTaskResultV2Schema.safeParse(done).success).toBe(true);
    expect(done).toMatchObject({
      status: 'failed',
      statusMessage: expect.stringContaining('failures must not exceed tests'),
      error: { code: -32602, message: 'Invalid arguments: failures must not exceed tests' },
    });
    expect(done).not.toHaveProperty('result');
  });

  it('Invalid or nonexistent taskId: -32602, for tasks/get, tasks/update and tasks/cancel', async () => {
    const notFound = { code: -32602, message: 'Failed to retrieve task: Task not found' };
    expect(rpcError(await getTask('no-such-task'))).toEqual(notFound);
    expect(rpcError(await ext('tasks/update', { taskId: 'no-such-task', inputResponses: {} }))).toEqual(notFound);
    expect(rpcError(await ext('tasks/cancel', { taskId: 'no-such-task' }))).toEqual(notFound);
    expect(rpcError(await ext('tasks/get', { taskId: 42 })).code).toBe(-32602);
  });

  it('Servers MUST perform authorization checks on each task-related request: another principal gets "not found"', async () => {
    const alice = { headers: { authorization: 'Bearer alice' } };
    const bob = { headers: { authorization: 'Bearer bob' } };
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 }, alice);
    expect(ok(await getTask(taskId, alice)).status).toBe('working');
    expect(rpcError(await getTask(taskId, bob))).toMatchObject({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    expect(rpcError(await ext('tasks/cancel', { taskId }, bob)).code).toBe(-32602);
    expect(ok(await getTask(taskId, alice)).status).toBe('working');
  });

  it('operations of other dialects are not tasks here', async () => {
    const token = `tok-${crypto.randomUUID()}`;
    await modernRequest(
      stack.url,
      'tools/call',
      { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 30 }, operation: { token } },
      {
        capabilities: { experimental: { longRunningOperations: {} } },
      },
    );
    expect(await stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token })).toMatchObject({ dialect: 'sep-1391' });
    expect(rpcError(await getTask(token)).code).toBe(-32602);
  });
});

describe('tasks/update and tasks/cancel', () => {
  it('tasks/update: On success, the server MUST acknowledge the request with an empty result (resultType "complete")', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 });
    const ack = ok(await ext('tasks/update', { taskId, inputResponses: { 'unknown-key': { action: 'accept', content: {} } } }));
    expect(UpdateTaskResultV2Schema.safeParse(ack).success).toBe(true);
    expect(Object.keys(ack).filter((k) => k !== '_meta')).toEqual(['resultType']);
    expect(ack.resultType).toBe('complete');
    expect(rpcError(await ext('tasks/update', { taskId })).code).toBe(-32602);
  });

  it('tasks/cancel returns an empty ack, stops the execution, and the task settles to cancelled', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 600 });
    const ack = ok(await ext('tasks/cancel', { taskId }));
    expect(CancelTaskResultV2Schema.safeParse(ack).success).toBe(true);
    expect(Object.keys(ack).filter((k) => k !== '_meta')).toEqual(['resultType']);
    const task = ok(await getTask(taskId));
    expect(GetTaskResultV2Schema.safeParse(task).success).toBe(true);
    expect(task.status).toBe('cancelled');
    const record = await stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token: taskId });
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: record.executionArn! }));
    expect(execution.status).toBe('ABORTED');
  });

  it('tasks/cancel is idempotent on terminal tasks: the same ack, and the outcome stays', async () => {
    const taskId = await startTask('run_test_suite', { suite: 'done', tests: 1, failures: 0, durationSeconds: 0 });
    expect((await pollUntilTerminal(taskId)).status).toBe('completed');
    for (let i = 0; i < 2; i++) expect(ok(await ext('tasks/cancel', { taskId })).resultType).toBe('complete');
    expect(ok(await getTask(taskId))).toMatchObject({ status: 'completed', result: { structuredContent: { suite: 'done' } } });
  });

  it('notifications/cancelled MUST NOT be used for task cancellation: it leaves a task running', async () => {
    const id = `req-${crypto.randomUUID()}`;
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 }, { id });
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
    await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body,
    });
    expect(ok(await getTask(taskId)).status).toBe('working');
  });
});

describe('Streamable HTTP routing headers', () => {
  it('the client MUST set the Mcp-Name header to params.taskId: missing gets -32020 and HTTP 400', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 });
    const logs = captureLogs('request rejected');
    const response = await getTask(taskId, { omitHeaders: ['mcp-name'] });
    expect(response.status).toBe(400);
    expect(rpcError(response).code).toBe(-32020);
    expect(logs.entries.map((entry) => [entry.level, entry.method])).toEqual([['WARN', 'tasks/get']]);
  });

  it('a Mcp-Name that does not match params.taskId gets -32020 and HTTP 400', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 });
    const logs = captureLogs('request rejected');
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const response = await ext(method, { taskId }, { headers: { 'mcp-name': 'another-task' } });
      expect(response.status).toBe(400);
      expect(rpcError(response).code).toBe(-32020);
    }
    expect(ok(await getTask(taskId)).status).toBe('working');
    expect(logs.entries.map((entry) => [entry.level, entry.method])).toEqual([
      ['WARN', 'tasks/get'],
      ['WARN', 'tasks/cancel'],
    ]);
  });

  it('a missing or mismatched Mcp-Method gets -32020 and HTTP 400', async () => {
    const taskId = await startTask('analyze_dataset', { rows: 10, delaySeconds: 30 });
    const logs = captureLogs('request rejected');
    for (const options of [{ omitHeaders: ['mcp-method'] }, { headers: { 'mcp-method': 'tasks/cancel' } }]) {
      const response = await getTask(taskId, options);
      expect(response.status).toBe(400);
      expect(rpcError(response).code).toBe(-32020);
    }
    expect(logs.lines()).toEqual(['WARN request rejected', 'WARN request rejected']);
  });
});

describe('the v2 Client with the ext-tasks session', () => {
  async function connect() {
    const client = new Client({ name: 'e2e-tasks', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(stack.url));
    const session = createTaskSessionFromClient(client, {
      endpointId: 'e2e-local',
      rawDispatch: modernDispatch(stack.url) as never,
      v2RequestFraming: { protocolVersion: MODERN_VERSION, clientInfo: { name: 'e2e-tasks', version: '1.0.0' }, clientCapabilities: {} },
    });
    return { client, session };
  }

  it('callTool on analyze_dataset gives kind "task", and settle() gives the correct statistics', async () => {
    const { client, session } = await connect();
    try {
      expect(client.getProtocolEra()).toBe('modern');
      const execution = await session.callTool('analyze_dataset', { rows: 150_001, seed: 3 });
      expect(execution.kind).toBe('task');
      const { outcome } = await execution.settle();
      const result = resultFromTaskOutcome(outcome) as { structuredContent: Record<string, number> };
      const stats = result.structuredContent;
      expectStatsOf(stats, 150_001, 3);
    } finally {
      await session.close();
      await client.close();
    }
  });

  it('cancel() cancels the task on the server', async () => {
    const { client, session } = await connect();
    try {
      const execution = await session.callTool('analyze_dataset', { rows: 10, delaySeconds: 600 });
      expect(execution.kind).toBe('task');
      const taskId = execution.handle!.taskId as string;
      await execution.cancel();
      expect(ok(await getTask(taskId)).status).toBe('cancelled');
    } finally {
      await session.close();
      await client.close();
    }
  });

  it('a sync tool comes back immediately', async () => {
    const { client, session } = await connect();
    try {
      const execution = await session.callTool('quick_calculation', { a: 2, b: 3, op: 'add' });
      expect(execution.kind).toBe('immediate');
      const { outcome } = await execution.settle();
      expect(resultFromTaskOutcome(outcome)).toMatchObject({ structuredContent: { result: 5 } });
    } finally {
      await session.close();
      await client.close();
    }
  });
});
