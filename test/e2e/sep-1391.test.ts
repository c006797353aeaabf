/**
 * SEP-1391 long-running operations against the local stack over raw HTTP (JSON-RPC).
 * Test names quote the SEP sentence (MUST/SHOULD) they check.
 */
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DescribeExecutionCommand, ListExecutionsCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatsOf } from '../support/expected-stats.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack, startTestStackWithSfn, stopTestStack } from '../support/local-stack-fixture.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { legacyNotification, legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus, rpcError } from '../support/rpc-assertions.ts';

const LRO = { experimental: { longRunningOperations: {} } };
const TERMINAL = ['completed', 'failed', 'canceled', 'unknown'];

let stack: LocalStack;
let sfn: SFNClient;

beforeAll(async () => {
  // Handle tools off: this file checks what a client without async support sees when the server serves none.
  ({ stack, sfn } = await startTestStackWithSfn({ handleTools: false }));
});
afterAll(async () => {
  await stopTestStack({ stack, sfn });
});

const token = () => `tok-${randomUUID()}`;

function call(
  name: string,
  args: Record<string, unknown>,
  operation?: Record<string, unknown>,
  options: { id?: number | string; headers?: Record<string, string> } = {},
) {
  return legacyRequest(stack.url, 'tools/call', { name, arguments: args, ...(operation ? { operation } : {}) }, options);
}
const status = (t: string, headers?: Record<string, string>) => legacyRequest(stack.url, 'tools/async/status', { token: t }, headers ? { headers } : {});
const result = (t: string) => legacyRequest(stack.url, 'tools/async/result', { token: t });

/** Polls as the SEP asks: "Clients SHOULD respect this value when polling for results." */
function pollUntilTerminal(t: string, pollFrequency: number) {
  return pollUntilStatus(() => status(t), TERMINAL, { interval: pollFrequency * 1000, timeout: 50_000 });
}

describe('discovery and compatibility', () => {
  it('Async tools MUST be marked with an invocationMode field', async () => {
    const tools = ok(await legacyRequest(stack.url, 'tools/list', {}, { capabilities: LRO })).tools as Array<Record<string, unknown>>;
    expect(Object.fromEntries(tools.map((t) => [t.name, t.invocationMode]))).toEqual({
      analyze_dataset: 'async',
      approve_deployment: 'async',
      approve_deployment_durable: 'async',
      count_primes_durable: 'async',
      export_dataset: 'async',
      quick_calculation: 'sync',
      run_test_suite: 'async',
      summarize_numbers: 'async',
    });
  });

  it('SDKs MUST NOT show LRO-only tools or the invocationMode field to clients on old protocol versions', async () => {
    // 2025-11-25 clients see async tools as tasks (execution.taskSupport); "old" is the revision before.
    for (const response of [await legacyRequest(stack.url, 'tools/list', {}, { version: '2025-06-18' }), await modernRequest(stack.url, 'tools/list')]) {
      const tools = ok(response).tools as Array<Record<string, unknown>>;
      expect(tools.map((t) => t.name)).not.toContain('analyze_dataset');
      expect(tools.some((t) => 'invocationMode' in t)).toBe(false);
    }
  });

  it('declares support per request in the 2026-07-28 envelope too', async () => {
    const tools = ok(await modernRequest(stack.url, 'tools/list', {}, { capabilities: LRO })).tools as Array<Record<string, unknown>>;
    expect(tools.find((t) => t.name === 'analyze_dataset')?.invocationMode).toBe('async');
  });

  it('hybrid tools are shown to old clients without the field and run synchronously', async () => {
    const response = ok(await call('run_test_suite', { suite: 's', tests: 2, failures: 1, durationSeconds: 0 }));
    expect(response.structuredContent).toEqual({ suite: 's', passed: 1, failed: 1, durationSeconds: 0 });
    expect(response.operation).toBeUndefined();
  });
});

describe('the full flow', () => {
  it('analyze_dataset: start, poll honouring pollFrequency, completed, correct statistics', async () => {
    const t = token();
    const started = ok(await call('analyze_dataset', { rows: 250_001, seed: 7, delaySeconds: 2 }, { token: t, keepAlive: 600 }));
    // "The CallToolResult MAY include immediate results in its content fields"
    expect(started.content[0].text).toContain('analyze_dataset');
    expect(started.content[0].text).toContain('tools/async/status');
    expect(started.operation).toEqual({ status: 'working', keepAlive: 600, pollFrequency: 2 });

    const first = ok(await status(t));
    expect(first).toMatchObject({ status: 'working', keepAlive: 600, pollFrequency: 2, statusMessage: expect.any(String) });

    const done = await pollUntilTerminal(t, started.operation.pollFrequency);
    expect(done.status).toBe('completed');

    const payload = ok(await result(t));
    const stats = payload.result.structuredContent;
    expectStatsOf(stats, 250_001, 7);
    // Results can be read any number of times until keepAlive expires.
    expect(ok(await result(t))).toEqual(payload);
  });

  it('"failed": The error field SHOULD be set to the failure reason; the failed result is retrievable', async () => {
    const t = token();
    ok(await call('run_test_suite', { suite: 'boom', tests: 3, failures: 0, durationSeconds: 0, crash: true }, { token: t }));
    const done = await pollUntilTerminal(t, 0.2);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/TestSuiteCrashed/);
    const payload = ok(await result(t));
    expect(payload.result.isError).toBe(true);
    expect(payload.result.content[0].text).toMatch(/Error: TestSuiteCrashed\nCause: .+/);
  });

  it('reports a protocol error raised by the state machine as failed with its message', async () => {
    const t = token();
    ok(await call('run_test_suite', { suite: 'bad', tests: 1, failures: 5, durationSeconds: 0 }, { token: t }));
    const done = await pollUntilTerminal(t, 0.2);
    expect(done).toMatchObject({ status: 'failed', error: expect.stringContaining('failures must not exceed tests') });
    expect(rpcError(await result(t))).toMatchObject({ code: -32602, message: expect.stringContaining('failures must not exceed tests') });
  });

  it('tools/async/result on a running operation is -32602 saying it is not finished', async () => {
    const t = token();
    ok(await call('analyze_dataset', { rows: 10, delaySeconds: 30 }, { token: t }));
    expect(ok(await status(t)).status).toBe('working');
    expect(rpcError(await result(t))).toMatchObject({ code: -32602, message: expect.stringContaining('not finished') });
    // Asking early changes nothing: the operation is still running.
    expect(ok(await status(t)).status).toBe('working');
  });
});

describe('tokens and idempotency', () => {
  it('The server MUST validate that this token is unique: the same token and arguments return the same operation', async () => {
    const t = token();
    const args = { rows: 10, delaySeconds: 30 };
    const first = ok(await call('analyze_dataset', args, { token: t }));
    const second = ok(await call('analyze_dataset', { delaySeconds: 30, rows: 10 }, { token: t }));
    expect(second).toEqual(first);
  });

  it('tools/call called with a token that was already used to start a different operation: -32602', async () => {
    const t = token();
    ok(await call('analyze_dataset', { rows: 10, delaySeconds: 30 }, { token: t }));
    expect(rpcError(await call('analyze_dataset', { rows: 11, delaySeconds: 30 }, { token: t }))).toMatchObject({
      code: -32602,
      message: expect.stringContaining('token already used'),
    });
    expect(rpcError(await call('run_test_suite', { suite: 'x', tests: 1, failures: 0, durationSeconds: 0 }, { token: t })).code).toBe(-32602);
  });

  it('settles 50 concurrent duplicates with one execution', async () => {
    const t = token();
    const args = { rows: 100, delaySeconds: 30 };
    const responses = await Promise.all(Array.from({ length: 50 }, () => call('analyze_dataset', args, { token: t })));
    const results = responses.map(ok);
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    const machine = stack.catalog.get('analyze_dataset')!.stateMachineArn;
    const { executions } = await sfn.send(new ListExecutionsCommand({ stateMachineArn: machine, maxResults: 1000 }));
    const record = await stack.app.operations.readLive({ ownerId: (await ownerOf(t))!, token: t });
    expect(executions!.filter((e) => e.name === record.executionName)).toHaveLength(1);
  });

  it('rejects invalid tokens with -32602 naming the problem', async () => {
    for (const [bad, message] of [
      ['', 'must not be empty'],
      ['x'.repeat(257), 'at most 256'],
      [42, 'must be a string'],
    ] as const) {
      expect(rpcError(await call('analyze_dataset', { rows: 10 }, { token: bad }))).toMatchObject({ code: -32602, message: expect.stringContaining(message) });
    }
    expect(rpcError(await status(''))).toMatchObject({ code: -32602, message: expect.stringContaining('token') });
  });

  it('This token SHOULD be scoped to the authorization context: another principal gets "not found"', async () => {
    const t = token();
    ok(await call('analyze_dataset', { rows: 10, delaySeconds: 30 }, { token: t }, { headers: { authorization: 'Bearer alice' } }));
    expect(ok(await status(t, { authorization: 'Bearer alice' })).status).toBe('working');
    expect(rpcError(await status(t, { authorization: 'Bearer bob' }))).toEqual({
      code: -32602,
      message: 'Failed to retrieve operation: Operation not found',
    });
  });

  it('Long-running operation called with a nonexistent token: -32602 "Operation not found"', async () => {
    expect(rpcError(await status(token()))).toEqual({ code: -32602, message: 'Failed to retrieve operation: Operation not found' });
    expect(rpcError(await result(token()))).toEqual({ code: -32602, message: 'Failed to retrieve operation: Operation not found' });
  });

  it('a task id of the same principal is no operation here: status and result answer "Operation not found"', async () => {
    const taskId = ok(await legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10 }, task: {} })).task.taskId as string;
    expect(rpcError(await status(taskId))).toEqual({ code: -32602, message: 'Failed to retrieve operation: Operation not found' });
    expect(rpcError(await result(taskId))).toEqual({ code: -32602, message: 'Failed to retrieve operation: Operation not found' });
  });
});

describe('keepAlive', () => {
  it('Servers MUST return its final value in operation.keepAlive, clamped by the tool and server maximum', async () => {
    const clamped = ok(await call('analyze_dataset', { rows: 10, delaySeconds: 30 }, { token: token(), keepAlive: 10 ** 9 }));
    expect(clamped.operation.keepAlive).toBe(604800);
    const defaulted = ok(await call('analyze_dataset', { rows: 10, delaySeconds: 30 }, { token: token() }));
    expect(defaulted.operation.keepAlive).toBe(3600);
  });

  it('An operation.keepAlive of null (unlimited) is granted only where the server allows it', async () => {
    const response = ok(await call('analyze_dataset', { rows: 10, delaySeconds: 30 }, { token: token(), keepAlive: null }));
    expect(response.operation.keepAlive).toBe(604800);
  });

  it('After keepAlive has elapsed, status and result say "Operation has expired"', async () => {
    const t = token();
    ok(await call('run_test_suite', { suite: 'short', tests: 1, failures: 0, durationSeconds: 0 }, { token: t, keepAlive: 1 }));
    expect((await pollUntilTerminal(t, 0.1)).status).toBe('completed');
    await new Promise((r) => setTimeout(r, 2100));
    const expired = { code: -32602, message: 'Failed to retrieve operation: Operation has expired' };
    expect(rpcError(await status(t))).toEqual(expired);
    expect(rpcError(await result(t))).toEqual(expired);
  });
});

describe('cancellation', () => {
  it('notifications/cancelled for the original request id moves the operation to "canceled" and stops the execution', async () => {
    const t = token();
    const requestId = `req-${randomUUID()}`;
    ok(await call('analyze_dataset', { rows: 10, delaySeconds: 600 }, { token: t }, { id: requestId }));
    const ack = await legacyNotification(stack.url, 'notifications/cancelled', { requestId, reason: 'user pressed stop' });
    expect(ack.status).toBe(202);
    const canceled = ok(await status(t));
    expect(canceled.status).toBe('canceled');
    expect(rpcError(await result(t))).toEqual({ code: -32602, message: 'Operation was canceled' });
    const record = await stack.app.operations.readLive({ ownerId: (await ownerOf(t))!, token: t });
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: record.executionArn! }));
    expect(execution.status).toBe('ABORTED');
  });

  it('cancelling a terminal operation changes nothing', async () => {
    const t = token();
    const requestId = 9_000_000 + Math.floor(Math.random() * 1_000_000);
    ok(await call('run_test_suite', { suite: 'done', tests: 1, failures: 0, durationSeconds: 0 }, { token: t }, { id: requestId }));
    expect((await pollUntilTerminal(t, 0.1)).status).toBe('completed');
    await legacyNotification(stack.url, 'notifications/cancelled', { requestId });
    expect(ok(await status(t)).status).toBe('completed');
    expect(ok(await result(t)).result.structuredContent).toMatchObject({ suite: 'done' });
  });

  it('a cancel from another principal does not touch the operation', async () => {
    const t = token();
    const requestId = `req-${randomUUID()}`;
    ok(await call('analyze_dataset', { rows: 10, delaySeconds: 600 }, { token: t }, { id: requestId }));
    await legacyNotification(stack.url, 'notifications/cancelled', { requestId }, { authorization: 'Bearer mallory' });
    expect(ok(await status(t)).status).toBe('working');
  });
});

describe('errors', () => {
  it('Long-running operation called by an outdated client: -32600', async () => {
    const outdated = await legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10 } }, { version: '2025-06-18' });
    expect(rpcError(outdated)).toMatchObject({ code: -32600 });
  });

  it('an async-only tool called without a token by a client that opted in: -32602 saying how to call it', async () => {
    const response = await legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10 } }, { capabilities: LRO });
    expect(rpcError(response)).toMatchObject({ code: -32602, message: expect.stringContaining('params.operation') });
  });

  it('a sync tool called with an operation token: -32602, the tool is not long-running', async () => {
    expect(rpcError(await call('quick_calculation', { a: 1, b: 2, op: 'add' }, { token: token() }))).toMatchObject({
      code: -32602,
      message: expect.stringContaining('not long-running'),
    });
  });

  it('accepts _operation.token on any request and ignores unknown fields', async () => {
    const response = await legacyRequest(stack.url, 'tools/list', { _operation: { token: 'abc' }, somethingNew: true }, { capabilities: LRO });
    expect(ok(response).tools.length).toBe(8);
    const t = token();
    ok(await call('analyze_dataset', { rows: 10, delaySeconds: 30 }, { token: t, futureField: 1 }));
    expect(ok(await legacyRequest(stack.url, 'tools/async/status', { token: t, _operation: { token: t } })).status).toBe('working');
  });
});

describe('durability', () => {
  it('a restart of the local server with --data: the same token still answers', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'async-mcp-data-'));
    try {
      const t = token();
      const first = await startTestStack({ dataDir });
      try {
        const started = await legacyRequest(first.url, 'tools/call', {
          name: 'run_test_suite',
          arguments: { suite: 'durable', tests: 4, failures: 1, durationSeconds: 0 },
          operation: { token: t },
        });
        expect(ok(started).operation.status).toBe('working');
        const done = await pollUntilStatus(() => legacyRequest(first.url, 'tools/async/status', { token: t }), TERMINAL);
        expect(done.status).toBe('completed');
      } finally {
        await first.close();
      }

      const second = await startTestStack({ dataDir });
      try {
        expect(ok(await legacyRequest(second.url, 'tools/async/status', { token: t })).status).toBe('completed');
        const payload = ok(await legacyRequest(second.url, 'tools/async/result', { token: t }));
        expect(payload.result.structuredContent).toEqual({ suite: 'durable', passed: 3, failed: 1, durationSeconds: 0 });
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('Internal errors: -32603, with a message and no stack trace', async () => {
    // Fault injection: an engine that cannot be reached, behind the real HTTP handler.
    const engine = new FakeWorkflowEngine();
    engine.failStartWith = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { name: 'TimeoutError' });
    const logged: unknown[] = [];
    const app = createAsyncMcpApp({
      store: new InMemoryRecordStore(),
      engine,
      catalog: stack.catalog,
      logger: { error: (_m, fields) => logged.push(fields), warn: () => undefined },
      secretKey: TEST_SECRET_KEY,
    });
    const request = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'analyze_dataset', arguments: { rows: 10 }, operation: { token: token() } },
      }),
    });
    const text = await (await app.fetch(request, 'someone')).text();
    const error = JSON.parse(
      text
        .split('\n')
        .find((l) => l.startsWith('data:'))!
        .slice(5),
    ).error;
    expect(error.code).toBe(-32603);
    expect(error.message).toMatch(/workflow engine/);
    expect(error.message).not.toMatch(/ECONNREFUSED|\n\s+at /);
    expect(JSON.stringify(logged)).toContain('ECONNREFUSED');
    expect(JSON.stringify(logged)).not.toContain('"rows"');
  });
});

/** The owner id the local stack derives for requests without a bearer token. */
async function ownerOf(_t: string): Promise<string | undefined> {
  const { ownerIdFor } = await import('../../lambdas/operations/fingerprint.ts');
  return ownerIdFor('local');
}
