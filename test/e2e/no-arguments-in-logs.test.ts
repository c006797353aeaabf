/**
 * Tool arguments and results never go to logs (issue 13 §5): full runs on the real local
 * stack (start, poll, result, cancel, a tool error, a rejection by the machine, a waited-on
 * call, requests the edge refuses), with a marker in every string argument, which the
 * tools echo into their results and error causes. The stack logs structured JSON lines
 * (Powertools, on stdout and stderr) and, here, writes its EMF metric lines too, so every
 * console call and every direct write to stdout and stderr is captured from before it
 * starts until it stops.
 */
import { randomBytes } from 'node:crypto';
import { format } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { createEmfMetrics } from '../../lambdas/observability/emf-metrics.ts';
import { startTestStack, stopTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus, rpcError } from '../support/rpc-assertions.ts';

const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const LRO = { experimental: { longRunningOperations: {} } };

/** Everything the process would have printed while the stack ran. */
const lines: string[] = [];
let stack: LocalStack;

/** A string no server text contains, so finding it in a log line can only mean it was logged. */
const marker = (what: string) => `argmark-${what}-${randomBytes(6).toString('hex')}`;

beforeAll(async () => {
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(`console.${method} ${format(...args)}`));
  }
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array) => {
      lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write);
  }
  stack = await startTestStack({ metrics: createEmfMetrics() });
});

afterAll(async () => {
  await stopTestStack({ stack });
  vi.restoreAllMocks();
});

/** After every status event is delivered, no captured line holds any of `markers`. */
async function expectNoneLogged(...markers: string[]) {
  await stack.drainEvents();
  const leaked = lines.filter((line) => markers.some((m) => line.includes(m)));
  expect(leaked, `log lines holding tool arguments or results:\n${leaked.join('\n')}`).toEqual([]);
}

const suite = (name: string, more: Record<string, unknown> = {}) => ({ suite: name, tests: 4, failures: 1, durationSeconds: 0, ...more });

describe('no tool argument or result in any log line', () => {
  it('SEP-1391: start, poll, result (the result echoes the argument)', async () => {
    const name = marker('sep');
    const token = `tok-${randomBytes(8).toString('hex')}`;
    ok(
      await legacyRequest(stack.url, 'tools/call', {
        name: 'run_test_suite',
        arguments: suite(name),
        operation: { token },
        _meta: { 'io.modelcontextprotocol/clientCapabilities': LRO },
      }),
    );
    await pollUntilStatus(() => legacyRequest(stack.url, 'tools/async/status', { token }), ['completed']);
    const { result } = ok(await legacyRequest(stack.url, 'tools/async/result', { token }));
    expect(result.structuredContent).toMatchObject({ suite: name, passed: 3, failed: 1 });
    await expectNoneLogged(name);
  });

  it('Tasks extension: start, poll, cancel a run in progress', async () => {
    const name = marker('cancel');
    const created = ok(
      await modernRequest(stack.url, 'tools/call', { name: 'run_test_suite', arguments: suite(name, { durationSeconds: 3600 }) }, { capabilities: EXT }),
    );
    const taskId = created.taskId as string;
    await pollUntilStatus(() => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: EXT }), ['working']);
    ok(await modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: EXT }));
    await pollUntilStatus(() => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: EXT }), ['cancelled']);
    await expectNoneLogged(name);
  });

  it('a tool error: the crash cause names the suite, and it is stored, answered, never logged', async () => {
    const name = marker('crash');
    const created = ok(
      await modernRequest(stack.url, 'tools/call', { name: 'run_test_suite', arguments: suite(name, { crash: true }) }, { capabilities: EXT }),
    );
    const done = await pollUntilStatus(() => modernRequest(stack.url, 'tasks/get', { taskId: created.taskId }, { capabilities: EXT }), ['completed']);
    expect(done.result.isError).toBe(true);
    expect(JSON.stringify(done.result)).toContain(name);
    await expectNoneLogged(name);
  });

  it('2025-11-25 tasks: arguments the machine itself rejects (failures > tests)', async () => {
    const name = marker('rejected');
    const created = ok(await legacyRequest(stack.url, 'tools/call', { name: 'run_test_suite', arguments: suite(name, { tests: 1, failures: 5 }), task: {} }));
    const taskId = created.task.taskId as string;
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }), ['failed']);
    expect(rpcError(await legacyRequest(stack.url, 'tasks/result', { taskId }))).toMatchObject({ code: -32602 });
    await expectNoneLogged(name);
  });

  it('a waited-on call of an old client (the run, its result, its record)', async () => {
    const name = marker('sync');
    const result = ok(await legacyRequest(stack.url, 'tools/call', { name: 'run_test_suite', arguments: suite(name) }, { version: '2025-06-18' }));
    expect(result.structuredContent).toMatchObject({ suite: name });
    await expectNoneLogged(name);
  });

  it('requests the edge refuses and logs: the log line names the refusal, never the arguments', async () => {
    const name = marker('refused');
    const args = suite(name);
    // The SDK refuses a header/body mismatch, and the handler logs that it did.
    const mismatch = await modernRequest(
      stack.url,
      'tools/call',
      { name: 'run_test_suite', arguments: args },
      { capabilities: EXT, headers: { 'mcp-method': 'tools/list' } },
    );
    expect(mismatch.status).toBe(400);
    // Invalid arguments, an unparseable body that holds them, and an unsupported media type.
    rpcError(await legacyRequest(stack.url, 'tools/call', { name: 'run_test_suite', arguments: { ...args, extra: name } }));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_test_suite', arguments: args } });
    for (const [text, type] of [
      [body.slice(0, -3), 'application/json'],
      [body, 'text/plain'],
    ] as const) {
      const response = await fetch(stack.url, {
        method: 'POST',
        headers: { 'content-type': type, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: text,
      });
      expect(response.status).toBeGreaterThanOrEqual(400);
    }
    // The capture does see the stack's log lines: the refusal above was logged.
    await vi.waitFor(() => expect(lines.some((line) => line.includes('request rejected') && line.includes('Mcp-Method'))).toBe(true));
    // It is a structured line naming the request it belongs to.
    const rejected = lines.find((line) => line.includes('request rejected') && line.includes('Mcp-Method'))!;
    expect(JSON.parse(rejected)).toMatchObject({ level: 'WARN', service: 'async-mcp', function_request_id: expect.stringMatching(/^local-\d+$/) });
    await expectNoneLogged(name);
  });

  it('the metric lines of all the runs above hold ids and counts only', async () => {
    await stack.drainEvents();
    const metricLines = lines.filter((line) => line.includes('"_aws"'));
    // Starts, polls, ends and status-sync lag were all written while the runs above went on.
    const names = new Set(
      metricLines.flatMap((line) =>
        (JSON.parse(line) as { _aws: { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> } })._aws.CloudWatchMetrics[0]!.Metrics.map(
          (m) => m.Name,
        ),
      ),
    );
    expect([...names]).toEqual(expect.arrayContaining(['OperationsStarted', 'Polls', 'OperationsCompleted', 'OperationsCancelled', 'StatusSyncLag']));
    expect(metricLines.filter((line) => line.includes('argmark-'))).toEqual([]);
  });
});
