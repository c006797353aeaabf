/**
 * The MCP edge over a stub operations core: what each wire answer is made of, for
 * cases the local stack cannot stage on demand (a cancel racing completion, a worker
 * Cause with a trace, a principal at its limit).
 */
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { describe, expect, it, vi } from 'vitest';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import type { OperationKey, OperationRecord, Outcome } from '../../lambdas/operations/operation.ts';
import { OperationError } from '../../lambdas/operations/operation-error.ts';
import type { OperationsService, SyncStep } from '../../lambdas/operations/operations-service.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { sep1391Dialect } from '../../lambdas/mcp/dialects/sep-1391.ts';
import { tasks20251125Dialect } from '../../lambdas/mcp/dialects/tasks-2025-11-25.ts';
import { tasks20260728Dialect } from '../../lambdas/mcp/dialects/tasks-2026-07-28.ts';
import { createHttpHandler } from '../../lambdas/mcp/edge/http-handler.ts';
import { publicCause, toolErrorResult } from '../../lambdas/mcp/results/tool-result.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const PRINCIPAL = 'alice';
const OWNER = ownerIdFor(PRINCIPAL);
const tool = testTool({ name: 'job', invocation: 'both' });
/** A Lambda worker's Cause as AWS writes it: the trace holds source paths. */
const LAMBDA_CAUSE = JSON.stringify({
  errorType: 'TestSuiteCrashed',
  errorMessage: 'Test suite "nightly" crashed before producing a report',
  trace: [
    'TestSuiteCrashed: Test suite "nightly" crashed',
    '    at reportTestSuite (file:///var/task/index.mjs:12:9)',
    '    at /var/task/node_modules/x/y.js:1:1',
  ],
});

function record(overrides: Partial<OperationRecord> = {}): OperationRecord {
  const now = Date.now();
  return {
    ownerId: OWNER,
    token: 'op-1',
    tool: tool.name,
    argumentsHash: 'hash',
    dialect: 'sep-1391',
    status: 'working',
    executionName: 'exec-1',
    createdAt: now,
    updatedAt: now,
    keepAliveSeconds: 60,
    pollIntervalSeconds: 1,
    ...overrides,
  };
}

function baseCore() {
  return {
    limits: { maxBlockingSeconds: 1 },
    mintToken: () => 'minted',
    start: vi.fn(async (_input: { requestId?: string }) => record()),
    runSyncStep: vi.fn(async (_input: { requestId?: string }): Promise<SyncStep> => ({ kind: 'finished', outcome: { kind: 'result', output: { ok: true } } })),
    readCurrent: vi.fn(async (key: OperationKey) => record({ token: key.token })),
    cancel: vi.fn(async (key: OperationKey, _reason?: string) => record({ token: key.token, status: 'canceled' })),
    findByRequestId: vi.fn(async (_ownerId: string, _requestKey: string): Promise<OperationKey | undefined> => undefined),
    list: vi.fn(async () => ({ items: [] })),
    waitFor: vi.fn(async (key: OperationKey) => record({ token: key.token })),
    inputs: { pending: () => ({}) },
  };
}

/** A stub core: each test says what its methods answer; calls are recorded. */
function stubCore(overrides: Partial<Record<keyof ReturnType<typeof baseCore>, unknown>> = {}) {
  const core = { ...baseCore(), ...overrides } as ReturnType<typeof baseCore>;
  const errors: Array<Record<string, unknown>> = [];
  const fetch = createHttpHandler({
    deps: {
      catalog: createToolCatalog([tool]),
      operations: core as unknown as OperationsService,
      logger: { error: (_message, fields) => errors.push(fields), warn: () => undefined },
      secretKey: TEST_SECRET_KEY,
    },
    dialects: [tasks20260728Dialect, tasks20251125Dialect, sep1391Dialect],
  });
  const post = async (message: Record<string, unknown>, version = '2025-11-25') => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
    };
    let body: Record<string, unknown> = { jsonrpc: '2.0', ...message };
    if (version === MODERN) {
      // The 2026-07-28 per-request envelope, declaring the Tasks extension, and the standard headers.
      const params = (message.params ?? {}) as Record<string, unknown>;
      body = { ...body, params: { ...params, _meta: MODERN_META } };
      Object.assign(headers, { 'mcp-method': message.method, ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}) });
    }
    const response = await fetch(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(body) }), PRINCIPAL);
    const text = await response.text();
    const data = text.trim().startsWith('{')
      ? text
      : text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5))
          .at(-1);
    return { status: response.status, headers: response.headers, message: data ? JSON.parse(data) : undefined };
  };
  return { core, post, errors };
}

const MODERN = '2026-07-28';
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'unit', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

const cancelled = (params: Record<string, unknown>) => ({ method: 'notifications/cancelled', params });

describe('notifications/cancelled', () => {
  it('with _operation.token cancels exactly that operation; the request id is only informational', async () => {
    const { core, post } = stubCore();
    const ack = await post(cancelled({ requestId: 'other-request', _operation: { token: 'op-A' } }));
    expect(ack.status).toBe(202);
    expect(core.cancel).toHaveBeenCalledTimes(1);
    expect(core.cancel.mock.calls[0]![0]).toEqual({ ownerId: OWNER, token: 'op-A' });
    expect(core.findByRequestId).not.toHaveBeenCalled();
  });

  it('without a token looks the request id up with its JSON type: 7 and "7" are two ids', async () => {
    const { core, post } = stubCore();
    await post(cancelled({ requestId: 7 }));
    await post(cancelled({ requestId: '7' }));
    expect(core.findByRequestId.mock.calls).toEqual([
      [OWNER, 'n:7'],
      [OWNER, 's:7'],
    ]);
  });

  it('cancels the operation the typed request id names', async () => {
    const { core, post } = stubCore({ findByRequestId: vi.fn(async () => ({ ownerId: OWNER, token: 'op-B' })) });
    await post(cancelled({ requestId: 'call-1' }));
    expect(core.cancel.mock.calls.map((call) => call[0])).toEqual([{ ownerId: OWNER, token: 'op-B' }]);
  });

  it('never cancels a task: "notifications/cancelled MUST NOT be used for task cancellation"', async () => {
    for (const dialect of ['tasks-2025-11-25', 'tasks-2026-07-28'] as const) {
      const { core, post } = stubCore({ readCurrent: vi.fn(async (key: OperationKey) => record({ token: key.token, dialect })) });
      await post(cancelled({ requestId: 1, _operation: { token: 'task-1' } }));
      expect(core.cancel).not.toHaveBeenCalled();
    }
  });

  it('ignores a request id longer than any request served, and an oversized token, without touching the store', async () => {
    const { core, post } = stubCore();
    expect((await post(cancelled({ requestId: 'r'.repeat(257) }))).status).toBe(202);
    expect((await post(cancelled({ requestId: 1, _operation: { token: 't'.repeat(3000) } }))).status).toBe(202);
    expect(core.findByRequestId).not.toHaveBeenCalled();
    expect(core.readCurrent).not.toHaveBeenCalled();
    expect(core.cancel).not.toHaveBeenCalled();
  });
});

describe('tools/call passes the typed request id to the core', () => {
  it('for SEP-1391 operations, both tasks dialects and synchronous runs', async () => {
    const { core, post } = stubCore();
    await post({ id: 7, method: 'tools/call', params: { name: 'job', arguments: {}, operation: { token: 'tok-7' } } });
    await post({ id: '7', method: 'tools/call', params: { name: 'job', arguments: {}, task: {} } });
    await post({ id: 8, method: 'tools/call', params: { name: 'job', arguments: {} } });
    expect(core.start.mock.calls.map(([input]) => input.requestId)).toEqual(['n:7', 's:7']);
    expect(core.runSyncStep.mock.calls.map(([input]) => input.requestId)).toEqual(['n:8']);
  });
});

describe('2025-11-25 tasks/cancel', () => {
  it('answers -32602 when the task turned out to be terminal while the cancel was under way', async () => {
    const finished = record({ token: 'task-1', dialect: 'tasks-2025-11-25', status: 'completed', outcome: { kind: 'result', output: { ok: true } } });
    const { core, post } = stubCore({
      readCurrent: vi.fn(async () => record({ token: 'task-1', dialect: 'tasks-2025-11-25' })),
      cancel: vi.fn(async () => finished),
    });
    const answer = await post({ id: 1, method: 'tasks/cancel', params: { taskId: 'task-1' } });
    expect(core.cancel).toHaveBeenCalledTimes(1);
    expect(answer.message.error).toMatchObject({ code: -32602, message: "Cannot cancel task: already in terminal status 'completed'" });
  });

  it('answers the cancelled task when the cancel took effect', async () => {
    const { post } = stubCore({
      readCurrent: vi.fn(async () => record({ token: 'task-1', dialect: 'tasks-2025-11-25' })),
      cancel: vi.fn(async () => record({ token: 'task-1', dialect: 'tasks-2025-11-25', status: 'canceled' })),
    });
    const answer = await post({ id: 1, method: 'tasks/cancel', params: { taskId: 'task-1' } });
    expect(answer.message.result).toMatchObject({ taskId: 'task-1', status: 'cancelled' });
  });
});

describe('the active-operation limit', () => {
  const limited = () =>
    stubCore({
      start: vi.fn(async () => {
        throw new OperationError('LIMIT_EXCEEDED', 'Too many active operations: at most 2 may run at once', { data: { limit: 2, retryAfterSeconds: 30 } });
      }),
    });

  it('answers HTTP 429 with Retry-After and a JSON error naming the limit, in both eras', async () => {
    for (const version of ['2025-11-25', '2025-03-26', MODERN]) {
      const { post } = limited();
      const answer = await post({ id: 1, method: 'tools/call', params: { name: 'job', arguments: {}, operation: { token: `t-${version}` } } }, version);
      expect(answer.status, version).toBe(429);
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('30');
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect(answer.message).toMatchObject({
        id: 1,
        error: { code: -32029, message: 'Too many active operations: at most 2 may run at once', data: { limit: 2, retryAfterSeconds: 30 } },
      });
    }
  });
});

describe('an internal-error outcome (our machinery failed)', () => {
  const outcome: Outcome = { kind: 'internal-error', message: 'The execution for this operation no longer exists' };

  it('is -32603 with its message for the result of a tools/call, sync or async, and a failed status with that reason', async () => {
    const { post } = stubCore({
      readCurrent: vi.fn(async () => record({ status: 'failed', outcome })),
      runSyncStep: vi.fn(async () => ({ kind: 'finished', outcome })),
    });
    const expected = { code: -32603, message: outcome.message };
    expect((await post({ id: 1, method: 'tools/async/result', params: { token: 'op-1' } })).message.error).toEqual(expected);
    expect((await post({ id: 2, method: 'tools/call', params: { name: 'job', arguments: {} } })).message.error).toEqual(expected);
    const status = await post({ id: 3, method: 'tools/async/status', params: { token: 'op-1' } });
    expect(status.message.result).toMatchObject({ status: 'failed', error: outcome.message });
  });
});

describe('nothing internal reaches clients', () => {
  const crashed = record({ status: 'failed', outcome: { kind: 'tool-error', error: 'TestSuiteCrashed', cause: LAMBDA_CAUSE } });

  it('a Cause keeps its errorType and errorMessage only; other JSON causes lose trace and stackTrace', () => {
    expect(publicCause(LAMBDA_CAUSE, 'TestSuiteCrashed')).toBe('Test suite "nightly" crashed before producing a report');
    expect(publicCause(LAMBDA_CAUSE, 'States.TaskFailed')).toBe('TestSuiteCrashed: Test suite "nightly" crashed before producing a report');
    expect(publicCause(JSON.stringify({ reason: 'quota', stackTrace: ['at /opt/x.js:1:1'], trace: ['t'] }))).toBe('{"reason":"quota"}');
    expect(publicCause('The input was rejected by the state machine')).toBe('The input was rejected by the state machine');
    expect(toolErrorResult('run_test_suite', 'TestSuiteCrashed', LAMBDA_CAUSE).content).toEqual([
      { type: 'text', text: 'run_test_suite failed.\nError: TestSuiteCrashed\nCause: Test suite "nightly" crashed before producing a report' },
    ]);
  });

  it('SEP tools/async/status error carries the errorType and errorMessage only', async () => {
    const { post } = stubCore({ readCurrent: vi.fn(async () => crashed) });
    const { result } = (await post({ id: 1, method: 'tools/async/status', params: { token: 'op-1' } })).message;
    expect(result.error).toBe('TestSuiteCrashed: Test suite "nightly" crashed before producing a report');
    expect(JSON.stringify(result)).not.toMatch(/trace|\/var\/task|index\.mjs/);
  });

  it('the tool-error text of every dialect carries no trace and no source path', async () => {
    const { post } = stubCore({
      readCurrent: vi.fn(async (key: OperationKey) => ({
        ...crashed,
        token: key.token,
        dialect: key.token.startsWith('sep') ? 'sep-1391' : 'tasks-2025-11-25',
      })),
      waitFor: vi.fn(async (key: OperationKey) => ({ ...crashed, token: key.token, dialect: 'tasks-2025-11-25' })),
      runSyncStep: vi.fn(async () => ({ kind: 'finished', outcome: crashed.outcome! })),
    });
    const answers = [
      (await post({ id: 1, method: 'tools/async/result', params: { token: 'sep-1' } })).message.result.result,
      (await post({ id: 2, method: 'tasks/result', params: { taskId: 'task-1' } })).message.result,
      (await post({ id: 3, method: 'tools/call', params: { name: 'job', arguments: {} } })).message.result,
    ];
    for (const answer of answers) {
      expect(answer).toMatchObject({ isError: true });
      expect(answer.content[0].text).toContain('Test suite "nightly" crashed before producing a report');
      expect(JSON.stringify(answer)).not.toMatch(/trace|\/var\/task|index\.mjs|node_modules/);
    }
  });
});
