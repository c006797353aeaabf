/**
 * Cancellation hits exactly the intended operation, on the local stack over raw HTTP:
 * by `_operation.token` (the SEP's Modified Base Notification), else by the typed
 * request id of the latest `tools/call` from the same principal. Each test runs as its
 * own principal (bearer token), so request ids never meet across tests.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyNotification, legacyRequest } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

/** Runs until cancelled: the analysis waits ten minutes before it starts. */
const LONG = { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 600 } };

/** One principal's view of the server. */
function principal() {
  const headers = { authorization: `Bearer ${randomUUID()}` };
  const request = (method: string, params: Record<string, unknown>, id?: number | string) =>
    legacyRequest(stack.url, method, params, { headers, ...(id === undefined ? {} : { id }) });
  return {
    /** A SEP-1391 operation of the long tool; returns its token. */
    async startOperation(id: number | string): Promise<string> {
      const token = `tok-${randomUUID()}`;
      ok(await request('tools/call', { ...LONG, operation: { token } }, id));
      return token;
    },
    /** A 2025-11-25 task of the long tool; returns its taskId. */
    async startTask(id: number | string): Promise<string> {
      return ok(await request('tools/call', { ...LONG, task: {} }, id)).task.taskId as string;
    },
    call: (name: string, args: Record<string, unknown>, id: number | string) => request('tools/call', { name, arguments: args }, id),
    cancel: (params: Record<string, unknown>) => legacyNotification(stack.url, 'notifications/cancelled', params, headers),
    operationStatus: async (token: string) => ok(await request('tools/async/status', { token })).status as string,
    taskStatus: async (taskId: string) => ok(await request('tasks/get', { taskId })).status as string,
    headers,
  };
}

describe('notifications/cancelled with _operation.token', () => {
  it('cancels exactly the operation the token names; the request id is only informational', async () => {
    const alice = principal();
    const first = await alice.startOperation('call-A');
    const second = await alice.startOperation('call-B');
    // The request id names the second operation, the token the first: the token wins.
    expect((await alice.cancel({ requestId: 'call-B', _operation: { token: first } })).status).toBe(202);
    expect(await alice.operationStatus(first)).toBe('canceled');
    expect(await alice.operationStatus(second)).toBe('working');
    await alice.cancel({ requestId: 'call-B' });
    expect(await alice.operationStatus(second)).toBe('canceled');
  });

  it('from another principal touches nothing', async () => {
    const alice = principal();
    const token = await alice.startOperation(1);
    await principal().cancel({ requestId: 1, _operation: { token } });
    expect(await alice.operationStatus(token)).toBe('working');
    await alice.cancel({ _operation: { token } });
    expect(await alice.operationStatus(token)).toBe('canceled');
  });

  it('never cancels a task: "The notifications/cancelled notification MUST NOT be used for task cancellation"', async () => {
    const alice = principal();
    const taskId = await alice.startTask(5);
    await alice.cancel({ requestId: 5, _operation: { token: taskId } });
    expect(await alice.taskStatus(taskId)).toBe('working');
    ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId }, { headers: alice.headers }));
  });
});

describe('notifications/cancelled by request id alone', () => {
  it('7 and "7" are two request ids: each cancel stops only its own operation', async () => {
    const alice = principal();
    const numeric = await alice.startOperation(7);
    const text = await alice.startOperation('7');
    await alice.cancel({ requestId: '7' });
    expect(await alice.operationStatus(text)).toBe('canceled');
    expect(await alice.operationStatus(numeric)).toBe('working');
    await alice.cancel({ requestId: 7 });
    expect(await alice.operationStatus(numeric)).toBe('canceled');
  });

  it('targets the latest tools/call with that id: a finished synchronous call that reused the id makes the cancel a no-op', async () => {
    const alice = principal();
    const express = await alice.startOperation('reused-1');
    // quick_calculation is EXPRESS: it cannot be cancelled, so it takes the id away.
    expect(ok(await alice.call('quick_calculation', { a: 1, b: 2, op: 'add' }, 'reused-1')).structuredContent).toEqual({ result: 3 });
    await alice.cancel({ requestId: 'reused-1' });
    expect(await alice.operationStatus(express)).toBe('working');

    const standard = await alice.startOperation('reused-2');
    // run_test_suite without a token runs synchronously as a STANDARD execution, which finished.
    const report = ok(await alice.call('run_test_suite', { suite: 'quick', tests: 1, failures: 0, durationSeconds: 0 }, 'reused-2'));
    expect(report.structuredContent).toMatchObject({ suite: 'quick' });
    await alice.cancel({ requestId: 'reused-2' });
    expect(await alice.operationStatus(standard)).toBe('working');

    await Promise.all([express, standard].map((token) => alice.cancel({ _operation: { token } })));
  });

  it('a task started with a reused id supersedes an older operation, and is not cancelled either', async () => {
    const alice = principal();
    const operation = await alice.startOperation(42);
    const taskId = await alice.startTask(42);
    await alice.cancel({ requestId: 42 });
    expect(await alice.operationStatus(operation)).toBe('working');
    expect(await alice.taskStatus(taskId)).toBe('working');
    await alice.cancel({ _operation: { token: operation } });
    ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId }, { headers: alice.headers }));
  });

  it('stops a synchronous STANDARD call that is still running, and the call answers that it was canceled', async () => {
    const alice = principal();
    const running = alice.call('run_test_suite', { suite: 'slow', tests: 1, failures: 0, durationSeconds: 40 }, 'sync-1');
    // The call holds its connection while the run waits; cancel once the run is under way.
    await expect
      .poll(
        async () => {
          await alice.cancel({ requestId: 'sync-1' });
          return Promise.race([running.then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 200))]);
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe('answered');
    const result = ok(await running);
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/Canceled/);
  });

  it('a cancel for an id no call used changes nothing and is acknowledged', async () => {
    const alice = principal();
    const token = await alice.startOperation('known');
    expect((await alice.cancel({ requestId: 'unknown' })).status).toBe(202);
    expect(await alice.operationStatus(token)).toBe('working');
    await alice.cancel({ requestId: 'known' });
  });
});
