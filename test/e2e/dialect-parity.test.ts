/**
 * One scenario through every async dialect (SEP-1391, the Tasks extension, 2025-11-25
 * tasks): start, poll, complete, fail, cancel, expire. Each dialect words the outcome its
 * own way; underneath, the same call must end the same way in all of them. The stack
 * clamps every retention to 2 s, so the server's bound and expiry on read are part of it.
 */
import { randomUUID } from 'node:crypto';
import { GetDurableExecutionCommand, ListDurableExecutionsByFunctionCommand } from '@aws-sdk/client-lambda';
import { DescribeExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-service.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStackWithSfn, stopTestStack } from '../support/local-stack-fixture.ts';
import { legacyNotification, legacyRequest, modernRequest, type RawResponse } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

const RETENTION_SECONDS = 2;

let stack: LocalStack;
let sfn: SFNClient;

beforeAll(async () => {
  ({ stack, sfn } = await startTestStackWithSfn({ limits: { ...DEFAULT_LIMITS, maxKeepAliveSeconds: RETENTION_SECONDS } }));
});
afterAll(async () => {
  await stopTestStack({ stack, sfn });
});

interface Started {
  handle: string;
  status: string;
  retentionMs: number | null;
  pollMs: number;
}

/** How a call ended, as the client reads it: the tool result or the JSON-RPC error. */
type Final = { result: { content: unknown; structuredContent?: unknown; isError?: boolean } } | { error: { code: number; message: string } };

/** A dialect seen from its client: how it starts, polls, reads, cancels, and its status words. */
interface Driver {
  name: string;
  start(tool: string, args: Record<string, unknown>): Promise<Started>;
  /** The wire status, or the JSON-RPC error a status read gets. */
  status(handle: string): Promise<RawResponse>;
  final(handle: string): Promise<Final>;
  cancel(handle: string): Promise<void>;
  words: { working: string; completed: string; toolFailure: string; protocolFailure: string; cancelled: string };
}

/** A tool result, bare or wrapped in the `result` field of a legacy answer. */
type CallResult = { content?: unknown; structuredContent?: unknown; isError?: boolean; result?: CallResult };

function finalOf(response: RawResponse, pick: (result: CallResult) => CallResult | undefined = (r) => r): Final {
  if (response.message?.error) return { error: { code: response.message.error.code, message: response.message.error.message } };
  const { content, structuredContent, isError } = pick(response.message!.result) ?? {};
  return { result: { content, ...(structuredContent === undefined ? {} : { structuredContent }), ...(isError === undefined ? {} : { isError }) } };
}

const LRO = { experimental: { longRunningOperations: {} } };
const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const requestIds = new Map<string, string>();

const drivers: Driver[] = [
  {
    name: 'SEP-1391',
    async start(tool, args) {
      const token = `tok-${randomUUID()}`;
      const id = `req-${randomUUID()}`;
      requestIds.set(token, id);
      const started = ok(await legacyRequest(stack.url, 'tools/call', { name: tool, arguments: args, operation: { token } }, { capabilities: LRO, id }));
      return {
        handle: token,
        status: started.operation.status,
        retentionMs: started.operation.keepAlive * 1000,
        pollMs: started.operation.pollFrequency * 1000,
      };
    },
    status: (token) => legacyRequest(stack.url, 'tools/async/status', { token }),
    final: async (token) => finalOf(await legacyRequest(stack.url, 'tools/async/result', { token }), (r) => r.result),
    async cancel(token) {
      await legacyNotification(stack.url, 'notifications/cancelled', { requestId: requestIds.get(token) });
    },
    words: { working: 'working', completed: 'completed', toolFailure: 'failed', protocolFailure: 'failed', cancelled: 'canceled' },
  },
  {
    name: 'Tasks extension (2026-07-28)',
    async start(tool, args) {
      const created = ok(await modernRequest(stack.url, 'tools/call', { name: tool, arguments: args }, { capabilities: EXT }));
      return { handle: created.taskId, status: created.status, retentionMs: created.ttlMs, pollMs: created.pollIntervalMs };
    },
    status: (taskId) => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: EXT }),
    async final(taskId) {
      const task = await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: EXT });
      const { result, error } = ok(task);
      return error ? { error: { code: error.code, message: error.message } } : finalOf({ ...task, message: { result } });
    },
    async cancel(taskId) {
      ok(await modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: EXT }));
    },
    words: { working: 'working', completed: 'completed', toolFailure: 'completed', protocolFailure: 'failed', cancelled: 'cancelled' },
  },
  {
    name: '2025-11-25 tasks',
    async start(tool, args) {
      const { task } = ok(await legacyRequest(stack.url, 'tools/call', { name: tool, arguments: args, task: {} }));
      return { handle: task.taskId, status: task.status, retentionMs: task.ttl, pollMs: task.pollInterval };
    },
    status: (taskId) => legacyRequest(stack.url, 'tasks/get', { taskId }),
    final: async (taskId) => finalOf(await legacyRequest(stack.url, 'tasks/result', { taskId })),
    async cancel(taskId) {
      ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId }));
    },
    words: { working: 'working', completed: 'completed', toolFailure: 'failed', protocolFailure: 'failed', cancelled: 'cancelled' },
  },
];

async function pollUntilTerminal(driver: Driver, handle: string): Promise<string> {
  const { words } = driver;
  const terminal = [words.completed, words.toolFailure, words.protocolFailure, words.cancelled];
  return (await pollUntilStatus(() => driver.status(handle), terminal)).status;
}

/** Per scenario step, each dialect's final answer: they must all be the same. */
const finals = new Map<string, Map<string, Final>>();
function record(step: string, driver: Driver, final: Final) {
  if (!finals.has(step)) finals.set(step, new Map());
  finals.get(step)!.set(driver.name, final);
}

describe.each(drivers)('$name', (driver) => {
  it("start: the handle is working, retention is clamped by the server bound, the poll interval is the tool's", async () => {
    const started = await driver.start('analyze_dataset', { rows: 10, delaySeconds: 30 });
    expect(started.status).toBe(driver.words.working);
    expect(started.retentionMs).toBe(RETENTION_SECONDS * 1000);
    expect(started.pollMs).toBe(2000);
    expect(ok(await driver.status(started.handle)).status).toBe(driver.words.working);
  });

  it("poll and complete: the result is the tool's", async () => {
    const { handle } = await driver.start('run_test_suite', { suite: 'parity', tests: 5, failures: 2, durationSeconds: 1 });
    expect(await pollUntilTerminal(driver, handle)).toBe(driver.words.completed);
    const final = await driver.final(handle);
    expect(final).toMatchObject({ result: { structuredContent: { suite: 'parity', passed: 3, failed: 2, durationSeconds: 1 } } });
    record('complete', driver, final);
  });

  it('fail (tool error): the isError result is retrievable', async () => {
    const { handle } = await driver.start('run_test_suite', { suite: 'crash', tests: 1, failures: 0, durationSeconds: 0, crash: true });
    expect(await pollUntilTerminal(driver, handle)).toBe(driver.words.toolFailure);
    const final = await driver.final(handle);
    expect(final).toMatchObject({ result: { isError: true } });
    record('tool error', driver, final);
  });

  it('fail (protocol error): the JSON-RPC error the state machine asked for', async () => {
    const { handle } = await driver.start('run_test_suite', { suite: 'bad', tests: 1, failures: 2, durationSeconds: 0 });
    expect(await pollUntilTerminal(driver, handle)).toBe(driver.words.protocolFailure);
    const final = await driver.final(handle);
    expect(final).toEqual({ error: { code: -32602, message: 'Invalid arguments: failures must not exceed tests' } });
    record('protocol error', driver, final);
  });

  it('cancel: the status says so and the execution is stopped', async () => {
    const { handle } = await driver.start('analyze_dataset', { rows: 10, delaySeconds: 600 });
    await driver.cancel(handle);
    expect(ok(await driver.status(handle)).status).toBe(driver.words.cancelled);
    const operation = await stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token: handle });
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: operation.executionArn! }));
    expect(execution.status).toBe('ABORTED');
  });
});

/** The status Lambda has for the durable execution an operation started. */
async function durableStatusOf(handle: string): Promise<string | undefined> {
  const operation = await stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token: handle });
  const lambda = stack.awsClients.lambda!;
  const listed = await lambda.send(
    new ListDurableExecutionsByFunctionCommand({ FunctionName: 'count_primes_durable', DurableExecutionName: operation.executionName }),
  );
  const arn = listed.DurableExecutions?.[0]?.DurableExecutionArn;
  return arn && (await lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }))).Status;
}

describe.each(drivers)('$name, a durable function tool', (driver) => {
  it("poll and complete: the result is the durable function's", async () => {
    const { handle, status } = await driver.start('count_primes_durable', { below: 100, chunks: 2, pauseSeconds: 1 });
    expect(status).toBe(driver.words.working);
    expect(await pollUntilTerminal(driver, handle)).toBe(driver.words.completed);
    const final = await driver.final(handle);
    expect(final).toMatchObject({
      result: {
        structuredContent: {
          below: 100,
          primes: 25,
          largest: 97,
          chunks: [
            { from: 0, to: 50, primes: 15 },
            { from: 50, to: 100, primes: 10 },
          ],
        },
      },
    });
    record('durable complete', driver, final);
  });

  it('cancel: the status says so and the durable execution is stopped', async () => {
    const { handle } = await driver.start('count_primes_durable', { below: 100, pauseSeconds: 60 });
    await driver.cancel(handle);
    expect(ok(await driver.status(handle)).status).toBe(driver.words.cancelled);
    await expect.poll(() => durableStatusOf(handle)).toBe('STOPPED');
  });
});

describe('across dialects', () => {
  it('expire: once the retention has passed, a read in every dialect is -32602 saying it expired', async () => {
    const handles = await Promise.all(
      drivers.map(async (driver) => {
        const { handle } = await driver.start('run_test_suite', { suite: 'brief', tests: 1, failures: 0, durationSeconds: 0 });
        expect(await pollUntilTerminal(driver, handle)).toBe(driver.words.completed);
        return handle;
      }),
    );
    await new Promise((r) => setTimeout(r, RETENTION_SECONDS * 1000 + 1100));
    for (const [i, driver] of drivers.entries()) {
      const response = await driver.status(handles[i]!);
      expect(response.message?.error, driver.name).toMatchObject({ code: -32602, message: expect.stringMatching(/expired/) });
    }
  });

  it("expire: a durable tool's finished operation expires in every dialect as a state machine's does", async () => {
    const handles = await Promise.all(
      drivers.map(async (driver) => {
        const { handle } = await driver.start('count_primes_durable', { below: 10, chunks: 1, pauseSeconds: 0 });
        expect(await pollUntilTerminal(driver, handle)).toBe(driver.words.completed);
        return handle;
      }),
    );
    await new Promise((r) => setTimeout(r, RETENTION_SECONDS * 1000 + 1100));
    for (const [i, driver] of drivers.entries()) {
      const response = await driver.status(handles[i]!);
      expect(response.message?.error, driver.name).toMatchObject({ code: -32602, message: expect.stringMatching(/expired/) });
    }
  });

  it.each(['complete', 'tool error', 'protocol error', 'durable complete'])('%s: every dialect hands the client the same final answer', (step) => {
    const answers = [...(finals.get(step)?.values() ?? [])];
    expect(answers).toHaveLength(drivers.length);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
  });
});
