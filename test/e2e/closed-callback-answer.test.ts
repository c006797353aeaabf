/**
 * Lambda's answer for a closed callback. A durable tool's question whose callback has closed
 * at the durable service (here it times out there while the question carries no deadline) is
 * still offered until someone answers it: Lambda then answers CallbackTimeoutException, which
 * must close the question as Step Functions' TaskTimedOut closes a state machine's, never be
 * an internal error (-32603) that offers the dead question again. The Step Functions twin
 * (ask_with_deadline) gets the same answer: HTTP 400 with -32602 saying the question is no
 * longer open, and the run goes on without it.
 */
import { randomUUID } from 'node:crypto';
import { GetDurableExecutionStateCommand, ListDurableExecutionsByFunctionCommand } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { captureLogs } from '../support/log-capture.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';
import { SEP_1391_CAPABILITIES, type StatusRead, sep1391Status, untilAskedOnStatus } from '../support/sep-1391-status.ts';
import { type JsonRpcMessage, postAnswer } from '../support/sse-reader.ts';

const DURABLE_TOOL = 'ask_callback_closes';
const MACHINE_TOOL = 'ask_with_deadline';
const NOT_APPROVED = 'no answer in time: not approved';
const APPROVE = { action: 'accept', content: {} };
const NO_LONGER_OPEN = /^The question approve is no longer open: .+; the run went on without the answer$/;
const LRO = SEP_1391_CAPABILITIES;
/** What the server logs of a late answer (WARN): taken here, and asserted by the tests that give one. */
const IGNORED = 'answer ignored: its question had closed';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ toolsDir: 'test/fixtures/closed-question-tools' });
});
afterAll(async () => {
  await stack?.close();
});

const status = (token: string) => sep1391Status(stack.url, token);

/** Starts `tool` (SEP-1391) and reads its status until it asks; answers the question it asked. */
async function startAsking(tool: string): Promise<{ token: string; question: JsonRpcMessage }> {
  const token = `tok-${randomUUID()}`;
  ok(await legacyRequest(stack.url, 'tools/call', { name: tool, arguments: {}, operation: { token } }, { capabilities: LRO }));
  const asked = await untilAskedOnStatus(stack.url, token);
  return { token, question: asked.requests[0]! };
}

/** Waits until the durable service has closed the callback of the tool's latest execution (it timed out there). */
async function callbackClosed(): Promise<void> {
  const lambda = stack.awsClients.lambda!;
  await vi.waitFor(
    async () => {
      const listed = await lambda.send(new ListDurableExecutionsByFunctionCommand({ FunctionName: DURABLE_TOOL }));
      const latest = (listed.DurableExecutions ?? []).reduce<(typeof listed.DurableExecutions & object)[number] | undefined>(
        (newest, execution) => (!newest || (execution.StartTimestamp ?? 0) > (newest.StartTimestamp ?? 0) ? execution : newest),
        undefined,
      );
      const state = await lambda.send(
        new GetDurableExecutionStateCommand({ DurableExecutionArn: latest?.DurableExecutionArn, CheckpointToken: undefined as never }),
      );
      expect(state.Operations?.find((operation) => operation.Type === 'CALLBACK')?.Status).toBe('TIMED_OUT');
    },
    { interval: 100, timeout: 10_000 },
  );
}

/** Posts the late approval and reads the refusal. */
async function answerLate(token: string, question: JsonRpcMessage) {
  const late = await postAnswer(stack.url, { jsonrpc: '2.0', id: question.id, result: { ...APPROVE, _operation: { token } } });
  return { status: late.status, body: JSON.parse(late.text) as { jsonrpc: string; id: unknown; error?: { code: number; message: string } } };
}

async function finalText(token: string): Promise<string | undefined> {
  await pollUntilStatus(() => legacyRequest(stack.url, 'tools/async/status', { token }, { capabilities: LRO }), ['completed'], { timeout: 20_000 });
  const final = ok(await legacyRequest(stack.url, 'tools/async/result', { token }, { capabilities: LRO }));
  return (final.result as StatusRead['result']).content?.[0]?.text;
}

describe("Lambda's answer for a closed callback", () => {
  it("answering a durable tool's question whose callback has closed gets the answer a Step Functions tool's timed-out token gets, and the question is not offered again", async () => {
    const durable = await startAsking(DURABLE_TOOL);
    const machine = await startAsking(MACHINE_TOOL);
    await callbackClosed();
    // The server was not told: the durable question is still offered.
    const before = await status(durable.token);
    expect(before.result.status).toBe('input_required');
    expect(before.requests.map((request) => request.id)).toEqual([durable.question.id]);

    const logs = captureLogs(IGNORED);
    const durableLate = await answerLate(durable.token, durable.question);
    // The state machine's question times out past its deadline (TimeoutSeconds 2).
    await vi.waitFor(async () => expect((await status(machine.token)).result.status).toBe('working'), { interval: 200, timeout: 10_000 });
    const machineLate = await answerLate(machine.token, machine.question);

    for (const late of [durableLate, machineLate]) {
      expect(late.status).toBe(400);
      expect(late.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32602, message: expect.stringMatching(NO_LONGER_OPEN) } });
    }
    expect(logs.entries).toEqual([
      expect.objectContaining({ level: 'WARN', tool: DURABLE_TOOL, reason: 'ended' }),
      expect.objectContaining({ level: 'WARN', tool: MACHINE_TOOL, reason: 'timed-out' }),
    ]);
    // Not offered again, and the run goes on without the answer, as its twin's does.
    const after = await status(durable.token);
    expect(after.requests).toEqual([]);
    expect(after.result.status).not.toBe('input_required');
    expect(await finalText(durable.token)).toBe(NOT_APPROVED);
    expect(await finalText(machine.token)).toBe(NOT_APPROVED);
  });

  it('tasks/update answering a closed durable callback is acknowledged, and inputRequests no longer offers the question', async () => {
    const EXTENSION = 'io.modelcontextprotocol/tasks';
    const CAPS = { elicitation: {}, extensions: { [EXTENSION]: {} } };
    const ext = (method: string, params: Record<string, unknown>) => modernRequest(stack.url, method, params, { capabilities: CAPS });
    const created = ok(await ext('tools/call', { name: DURABLE_TOOL, arguments: {} }));
    const taskId = created.taskId as string;
    const asked = await pollUntilStatus(() => ext('tasks/get', { taskId }), ['input_required'], { timeout: 15_000 });
    expect(Object.keys(asked.inputRequests)).toEqual(['approve']);
    await callbackClosed();
    // "A server SHOULD ignore any inputResponses responses mapped to a key that is not currently outstanding."
    const logs = captureLogs(IGNORED);
    expect(ok(await ext('tasks/update', { taskId, inputResponses: { approve: APPROVE } }))).toMatchObject({ resultType: 'complete' });
    expect(logs.entries).toEqual([expect.objectContaining({ level: 'WARN', tool: DURABLE_TOOL, reason: 'ended' })]);
    const after = ok(await ext('tasks/get', { taskId }));
    expect(after.inputRequests).toBeUndefined();
    expect(after.status).not.toBe('input_required');
    const done = await pollUntilStatus(() => ext('tasks/get', { taskId }), ['completed', 'failed', 'cancelled'], { timeout: 20_000 });
    expect((done.result as StatusRead['result']).content?.[0]?.text).toBe(NOT_APPROVED);
  });
});
