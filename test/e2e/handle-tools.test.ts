/**
 * Handle tools against the local stack, driven by clients that declare no async support:
 * a plain client over raw HTTP and the v1 SDK Client on a revision before tasks. They
 * start long-running tools, fetch results, cancel and list through the built-in tools;
 * clients that speak an async dialect never see them.
 *
 * The local stack runs with its default (handle tools on) and a 1-second blocking bound,
 * so hand-offs are quick.
 */
import { DescribeExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-service.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { expectedStats } from '../support/expected-stats.ts';
import { startTestStackWithSfn, stopTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest, modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

/** A revision before tasks: such a client declares no async support. */
const OLD = '2025-06-18';
const BUILT_INS = ['operation_cancel', 'operation_list', 'operation_result', 'operation_status'];

let stack: LocalStack;
let sfn: SFNClient;
let server: { url: URL };

beforeAll(async () => {
  // Wait states run at a tenth of real time.
  ({ stack, sfn } = await startTestStackWithSfn({ waitTimeScale: 0.1, limits: { ...DEFAULT_LIMITS, maxBlockingSeconds: 1 } }));
  server = stack;
});
afterAll(async () => {
  await stopTestStack({ stack, sfn });
});

const plain = (method: string, params: Record<string, unknown> = {}, options: CallOptions = {}) =>
  legacyRequest(server.url, method, params, { version: OLD, ...options });
const call = (name: string, args: Record<string, unknown>, options?: CallOptions) => plain('tools/call', { name, arguments: args }, options);
const as = (principal: string): CallOptions => ({ headers: { authorization: principal } });

/** Calls operation_result the way a model follows the instructions, until the tool's own result comes back. */
function resultOf(operationId: string, options?: CallOptions) {
  return vi.waitFor(
    async () => {
      const result = ok(await call('operation_result', { operationId, waitSeconds: 1 }, options));
      expect(result.structuredContent?.operationId).toBeUndefined();
      return result;
    },
    { timeout: 30_000, interval: 50 },
  );
}

describe('a plain client over raw HTTP', () => {
  it('sees every tool and the four built-ins', async () => {
    const tools = ok(await plain('tools/list')).tools as Array<{ name: string }>;
    expect(tools.map((t) => t.name).sort()).toEqual([
      'analyze_dataset',
      'approve_deployment',
      'approve_deployment_durable',
      'count_primes_durable',
      'export_dataset',
      ...BUILT_INS,
      'quick_calculation',
      'run_test_suite',
      'summarize_numbers',
    ]);
  });

  it('an async-only tool that finishes within its sync bound answers with its result', async () => {
    const result = ok(await call('analyze_dataset', { rows: 50, seed: 5 }));
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ count: 50, min: expectedStats(50, 5).min });
  });

  it('an async-only tool past its sync bound answers with an operationId, and operation_result reads the correct result', async () => {
    // 20 s of Wait at a tenth of real time: past the 1-second bound.
    const started = ok(await call('analyze_dataset', { rows: 5000, seed: 11, delaySeconds: 20 }));
    expect(started.structuredContent).toEqual({ operationId: expect.any(String), status: 'working', pollAfterSeconds: 2 });
    const { operationId } = started.structuredContent;
    expect(started.content[0].text).toMatch(/did not finish within 1 seconds and continues in the background/);
    expect(started.content[0].text).toContain(`operation_result with operationId "${operationId}"`);
    const result = await resultOf(operationId);
    const expected = expectedStats(5000, 11);
    expect(result.structuredContent).toMatchObject({ count: 5000, min: expected.min, max: expected.max });
    expect(result.structuredContent.mean).toBeCloseTo(expected.mean, 9);
    expect(ok(await call('operation_status', { operationId })).structuredContent).toEqual({
      operationId,
      status: 'completed',
      statusMessage: expect.any(String),
      pollAfterSeconds: 2,
    });
  });

  it('cancels a running operation, which stops its execution', async () => {
    const { operationId } = ok(await call('analyze_dataset', { rows: 10, delaySeconds: 600 })).structuredContent;
    expect(ok(await call('operation_cancel', { operationId })).structuredContent).toMatchObject({ operationId, status: 'canceled' });
    const record = await stack.app.operations.readCurrent({ ownerId: ownerIdFor('local'), token: operationId });
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: record.executionArn! }));
    expect(execution.status).toBe('ABORTED');
    expect(ok(await call('operation_result', { operationId }))).toMatchObject({ isError: true, structuredContent: { status: 'canceled' } });
  });

  it("lists the principal's operations, newest first", async () => {
    const principal = 'Bearer lister';
    const first = ok(await call('analyze_dataset', { rows: 10, delaySeconds: 600 }, as(principal))).structuredContent.operationId;
    const second = ok(await call('run_test_suite', { suite: 'listed', tests: 1, failures: 0, durationSeconds: 600 }, as(principal))).structuredContent
      .operationId;
    const listed = ok(await call('operation_list', {}, as(principal))).structuredContent;
    expect(listed.operations.map((o: { operationId: string; tool: string }) => [o.operationId, o.tool])).toEqual([
      [second, 'run_test_suite'],
      [first, 'analyze_dataset'],
    ]);
    ok(await call('operation_cancel', { operationId: first }, as(principal)));
    ok(await call('operation_cancel', { operationId: second }, as(principal)));
  });

  it('a hybrid tool past its sync bound is handed off, and its result is read later', async () => {
    const started = ok(await call('run_test_suite', { suite: 'nightly', tests: 5, failures: 1, durationSeconds: 20 }));
    expect(started.structuredContent).toMatchObject({ status: 'working', pollAfterSeconds: 2 });
    expect(started.content[0].text).toMatch(/did not finish within 1 seconds and continues in the background/);
    const result = await resultOf(started.structuredContent.operationId);
    expect(result.structuredContent).toEqual({ suite: 'nightly', passed: 4, failed: 1, durationSeconds: 20 });
  });

  it('a hybrid tool that finishes within its bound answers with its result; a protocol error stays a JSON-RPC error', async () => {
    expect(ok(await call('run_test_suite', { suite: 'quick', tests: 2, failures: 0, durationSeconds: 0 })).structuredContent).toEqual({
      suite: 'quick',
      passed: 2,
      failed: 0,
      durationSeconds: 0,
    });
    expect(rpcError(await call('run_test_suite', { suite: 'bad', tests: 1, failures: 2, durationSeconds: 0 }))).toMatchObject({
      code: -32602,
      message: 'Invalid arguments: failures must not exceed tests',
    });
  });

  it('a 2026-07-28 request that does not declare the Tasks extension gets handles too', async () => {
    const started = ok(await modernRequest(server.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 20 } }));
    const { operationId } = started.structuredContent;
    await vi.waitFor(
      async () => {
        const result = ok(await modernRequest(server.url, 'tools/call', { name: 'operation_result', arguments: { operationId, waitSeconds: 1 } }));
        expect(result.structuredContent?.operationId).toBeUndefined();
      },
      { timeout: 30_000 },
    );
  });

  it('another principal cannot read, wait on, cancel or list the handle', async () => {
    const { operationId } = ok(await call('analyze_dataset', { rows: 10, delaySeconds: 600 }, as('Bearer owner'))).structuredContent;
    const unknown = ok(await call('operation_status', { operationId: 'never-issued' }, as('Bearer intruder')));
    expect(unknown.isError).toBe(true);
    for (const tool of ['operation_status', 'operation_result', 'operation_cancel']) {
      expect(ok(await call(tool, { operationId }, as('Bearer intruder')))).toEqual(unknown);
    }
    const listed = ok(await call('operation_list', {}, as('Bearer intruder'))).structuredContent.operations as Array<{ operationId: string }>;
    expect(listed.map((o) => o.operationId)).not.toContain(operationId);
    expect(ok(await call('operation_cancel', { operationId }, as('Bearer owner'))).structuredContent.status).toBe('canceled');
  });
});

describe('clients that speak an async dialect', () => {
  it('never see the built-in tools: 2025-11-25, the Tasks extension, SEP-1391 in either era', async () => {
    const lro = { experimental: { longRunningOperations: {} } };
    const responses = [
      legacyRequest(server.url, 'tools/list'),
      legacyRequest(server.url, 'tools/list', {}, { version: OLD, capabilities: lro }),
      modernRequest(server.url, 'tools/list', {}, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } }),
      modernRequest(server.url, 'tools/list', {}, { capabilities: lro }),
    ];
    for (const response of responses) {
      const names = (ok(await response).tools as Array<{ name: string }>).map((t) => t.name);
      expect(names).toContain('analyze_dataset');
      expect(names.filter((n) => BUILT_INS.includes(n))).toEqual([]);
    }
  });
});

describe('the v1 SDK Client', () => {
  /** The v1 Client offers 2025-11-25; this one offers 2025-06-18, like a client released before tasks. */
  async function v1Client(revision?: string, capabilities?: Record<string, unknown>): Promise<Client> {
    const rewrite: typeof fetch = async (url, init) => {
      if (revision && typeof init?.body === 'string' && init.body.includes('"initialize"')) {
        const message = JSON.parse(init.body);
        message.params.protocolVersion = revision;
        return fetch(url, { ...init, body: JSON.stringify(message) });
      }
      return fetch(url, init);
    };
    const client = new Client({ name: 'e2e-handles-v1', version: '1.0.0' }, capabilities ? { capabilities } : {});
    await client.connect(new StreamableHTTPClientTransport(server.url, { fetch: rewrite }));
    return client;
  }

  it('on a revision before tasks: start, result, cancel and list, with structured content checked against each outputSchema', async () => {
    const client = await v1Client(OLD);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining([...BUILT_INS, 'analyze_dataset']));

      // The Client validates structuredContent against the listed outputSchema, so these also prove the schemas right.
      const started = await client.callTool({ name: 'analyze_dataset', arguments: { rows: 100, seed: 3, delaySeconds: 20 } });
      const { operationId } = started.structuredContent as { operationId: string };
      const result = await vi.waitFor(
        async () => {
          const r = await client.callTool({ name: 'operation_result', arguments: { operationId, waitSeconds: 1 } });
          expect((r.structuredContent as Record<string, unknown>).count).toBe(100);
          return r;
        },
        { timeout: 30_000 },
      );
      expect(result.isError).toBeFalsy();

      const handedOff = await client.callTool({ name: 'run_test_suite', arguments: { suite: 'v1', tests: 3, failures: 0, durationSeconds: 20 } });
      expect(handedOff.structuredContent).toMatchObject({ status: 'working' });
      const inTime = await client.callTool({ name: 'run_test_suite', arguments: { suite: 'v1', tests: 3, failures: 0, durationSeconds: 0 } });
      expect(inTime.structuredContent).toEqual({ suite: 'v1', passed: 3, failed: 0, durationSeconds: 0 });

      const slow = await client.callTool({ name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 600 } });
      const slowId = (slow.structuredContent as { operationId: string }).operationId;
      const canceled = await client.callTool({ name: 'operation_cancel', arguments: { operationId: slowId } });
      expect(canceled.structuredContent).toMatchObject({ operationId: slowId, status: 'canceled' });

      const listed = await client.callTool({ name: 'operation_list', arguments: {} });
      const ids = (listed.structuredContent as { operations: Array<{ operationId: string }> }).operations.map((o) => o.operationId);
      expect(ids).toEqual(expect.arrayContaining([operationId, slowId, (handedOff.structuredContent as { operationId: string }).operationId]));
    } finally {
      await client.close();
    }
  });

  it('on 2025-11-25 without the tasks capability ("Present if the client supports task-augmented requests"): the handle tools, and a result through them', async () => {
    const client = await v1Client();
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining([...BUILT_INS, 'analyze_dataset']));
      const started = await client.callTool({ name: 'analyze_dataset', arguments: { rows: 50, seed: 4, delaySeconds: 20 } });
      const { operationId } = started.structuredContent as { operationId: string };
      await vi.waitFor(
        async () => {
          const r = await client.callTool({ name: 'operation_result', arguments: { operationId, waitSeconds: 1 } });
          expect((r.structuredContent as Record<string, unknown>).count).toBe(50);
        },
        { timeout: 30_000 },
      );
    } finally {
      await client.close();
    }
  });

  it("a call that waits through the handle path shows the run's progress for its progressToken, as a synchronous call does", async () => {
    const client = await v1Client();
    try {
      const progress: unknown[] = [];
      const result = await client.callTool({ name: 'run_test_suite', arguments: { suite: 'p', tests: 12, failures: 2, durationSeconds: 1 } }, undefined, {
        onprogress: (p) => progress.push(p),
        timeout: 60_000,
      });
      expect(result.structuredContent).toMatchObject({ suite: 'p', passed: 10, failed: 2 });
      expect(progress.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('on 2025-11-25 declaring the tasks capability, sees no built-in tool', async () => {
    const client = await v1Client(undefined, { tasks: { list: {}, cancel: {} } });
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('analyze_dataset');
      expect(names.filter((n) => BUILT_INS.includes(n))).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
