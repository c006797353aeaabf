/**
 * Nothing internal reaches clients (issue 8 §6): a worker that throws fails its Task with
 * a Cause `{ errorType, errorMessage, trace }`, the trace holding source paths as in AWS.
 * Every answer a client can get about that failure, in every dialect, carries the type and
 * message only.
 */
import { randomUUID } from 'node:crypto';
import { DescribeExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { startTestStackWithSfn, stopTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

let stack: LocalStack;
let sfn: SFNClient;
beforeAll(async () => {
  ({ stack, sfn } = await startTestStackWithSfn());
});
afterAll(async () => {
  await stopTestStack({ stack, sfn });
});

const CRASH = { name: 'run_test_suite', arguments: { suite: 'nightly', tests: 3, failures: 0, durationSeconds: 0, crash: true } };
const MESSAGE = 'Test suite "nightly" crashed before producing a report';
/** What a stack trace or a source path looks like in any answer. */
const INTERNALS = /trace|stack|\bat \S+ \(|file:\/\/|\/[\w.-]+\/[\w./-]+\.(?:ts|js|mjs|cjs)\b|\.(?:ts|js|mjs|cjs):\d+/;

/** The answer names the failure (its message) and holds nothing that looks like a trace or a path. */
function expectNoInternals(answer: unknown) {
  const text = JSON.stringify(answer);
  expect(text).toContain(JSON.stringify(MESSAGE).slice(1, -1));
  expect(text).not.toMatch(INTERNALS);
}

describe('a worker crash', () => {
  it('is recorded by the workflow engine with a trace, as in AWS (so the checks below mean something)', async () => {
    const token = `tok-${randomUUID()}`;
    ok(await legacyRequest(stack.url, 'tools/call', { ...CRASH, operation: { token } }));
    await pollUntilStatus(() => legacyRequest(stack.url, 'tools/async/status', { token }), ['failed']);
    const record = await stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token });
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: record.executionArn! }));
    expect(execution.error).toBe('TestSuiteCrashed');
    expect(JSON.parse(execution.cause!)).toMatchObject({ errorType: 'TestSuiteCrashed', errorMessage: MESSAGE, trace: expect.any(Array) });
  });

  it('SEP-1391: tools/async/status error and the tools/async/result text carry errorType and errorMessage only', async () => {
    const token = `tok-${randomUUID()}`;
    ok(await legacyRequest(stack.url, 'tools/call', { ...CRASH, operation: { token } }));
    const status = await pollUntilStatus(() => legacyRequest(stack.url, 'tools/async/status', { token }), ['failed']);
    expect(status.error).toBe(`TestSuiteCrashed: ${MESSAGE}`);
    expectNoInternals(status);
    const { result } = ok(await legacyRequest(stack.url, 'tools/async/result', { token }));
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toBe(`run_test_suite failed.\nError: TestSuiteCrashed\nCause: ${MESSAGE}`);
    expectNoInternals(result);
  });

  it('2025-11-25 tasks: tasks/get and tasks/result', async () => {
    const { task } = ok(await legacyRequest(stack.url, 'tools/call', { ...CRASH, task: {} }));
    const done = await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId: task.taskId }), ['failed']);
    expect(JSON.stringify(done)).not.toMatch(INTERNALS);
    const result = ok(await legacyRequest(stack.url, 'tasks/result', { taskId: task.taskId }));
    expect(result.isError).toBe(true);
    expectNoInternals(result);
  });

  it('2026-07-28 Tasks extension: the result inlined in tasks/get', async () => {
    const capabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const created = ok(await modernRequest(stack.url, 'tools/call', CRASH, { capabilities }));
    const done = await pollUntilStatus(() => modernRequest(stack.url, 'tasks/get', { taskId: created.taskId }, { capabilities }), ['completed']);
    expect(done.result.isError).toBe(true);
    expectNoInternals(done);
  });

  it('a synchronous call: the isError result', async () => {
    const result = ok(await legacyRequest(stack.url, 'tools/call', CRASH));
    expect(result.isError).toBe(true);
    expectNoInternals(result);
  });
});
