/**
 * A question that timed out is no longer shown as open, on the local stack in every dialect.
 * The fixture `ask_with_deadline` asks for approval at a `.waitForTaskToken` state with
 * TimeoutSeconds 2; unanswered, its Catch goes on without the answer for 4 seconds more.
 * Step Functions sends no event for the timeout, so only the question's stored deadline
 * tells the server: from then on the operation reads `working` with no question, and a late
 * answer is not taken as an approval. The Tasks extension acknowledges it ("A server SHOULD
 * ignore any inputResponses responses mapped to a key that is not currently outstanding");
 * the wires where the answer is a JSON-RPC response POST refuse it with HTTP 400.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { initialize, startInputStack, type InputStack } from '../support/input-stack.ts';
import { captureLogs } from '../support/log-capture.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';
import { openStream, postAnswer, type JsonRpcMessage } from '../support/sse-reader.ts';

const TOOL = 'ask_with_deadline';
const NOT_APPROVED = 'no answer in time: not approved';
const APPROVE = { action: 'accept', content: {} };
const LATE = /^The question approve is no longer open: it timed out before the answer came/;
/** The server notes each late answer (WARN); each test takes its own dialect's, should the tests ever run at once. */
const lateAnswerNoted = (dialect: string) => captureLogs({ message: 'answer ignored: its question had closed', dialect });
const NOTED_TIMED_OUT = [expect.objectContaining({ level: 'WARN', inputKey: 'approve', reason: 'timed-out' })];

let input: InputStack;
beforeAll(async () => {
  input = await startInputStack();
});
afterAll(async () => {
  await input?.close();
});

/** What a status or result call answers, as far as these tests read it. */
type StatusResult = { status?: string; content?: Array<{ text?: string }> };

const textOf = (result: StatusResult | undefined) => result?.content?.[0]?.text;

/** Reads `read` until it says working (the question timed out while the run goes on). */
function untilWorking<T>(read: () => Promise<T>, status: (value: T) => string | undefined): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await read();
      expect(status(value)).toBe('working');
      return value;
    },
    { interval: 200, timeout: 5_000 },
  );
}

describe('Tasks extension (2026-07-28)', () => {
  const EXTENSION = 'io.modelcontextprotocol/tasks';
  const CAPS = { elicitation: {}, extensions: { [EXTENSION]: {} } };
  const ext = (method: string, params: Record<string, unknown>) => modernRequest(input.stack.url, method, params, { capabilities: CAPS });

  it('a question that timed out leaves inputRequests and the task reads working; a late tasks/update is acknowledged but approves nothing', async () => {
    const created = ok(await ext('tools/call', { name: TOOL, arguments: {} }));
    const taskId = created.taskId as string;
    const asked = await pollUntilStatus(() => ext('tasks/get', { taskId }), ['input_required'], { timeout: 10_000 });
    expect(Object.keys(asked.inputRequests)).toEqual(['approve']);
    const after = await untilWorking(
      async () => ok(await ext('tasks/get', { taskId })),
      (task) => task.status,
    );
    expect(after.inputRequests).toBeUndefined();
    // "On success, the server MUST acknowledge": the acknowledgement stays; the answer reaches nothing.
    const noted = lateAnswerNoted('tasks-2026-07-28');
    expect(ok(await ext('tasks/update', { taskId, inputResponses: { approve: APPROVE } }))).toMatchObject({ resultType: 'complete' });
    expect(noted.entries).toEqual(NOTED_TIMED_OUT);
    const done = await pollUntilStatus(() => ext('tasks/get', { taskId }), ['completed', 'failed', 'cancelled'], { timeout: 15_000 });
    expect(textOf(done.result)).toBe(NOT_APPROVED);
  });
});

describe('SEP-1391', () => {
  const CAPABILITIES = { experimental: { longRunningOperations: {} }, elicitation: {} };
  const META = { 'io.modelcontextprotocol/clientCapabilities': CAPABILITIES };

  async function status(token: string): Promise<{ requests: JsonRpcMessage[]; result: StatusResult }> {
    const stream = await openStream(input.stack.url, {
      jsonrpc: '2.0',
      id: `status-${randomUUID()}`,
      method: 'tools/async/status',
      params: { token, _meta: META },
    });
    const messages = await stream.rest();
    return { requests: messages.slice(0, -1), result: messages.at(-1)!.result };
  }

  it('once the question timed out, status reads working and carries no request; a late response is HTTP 400 saying it timed out', async () => {
    const token = `tok-${randomUUID()}`;
    ok(await legacyRequest(input.stack.url, 'tools/call', { name: TOOL, arguments: {}, operation: { token } }, { capabilities: CAPABILITIES }));
    const asked = await vi.waitFor(
      async () => {
        const polled = await status(token);
        expect(polled.result.status).toBe('input_required');
        return polled;
      },
      { interval: 100, timeout: 10_000 },
    );
    const question = asked.requests[0]!;
    const after = await untilWorking(
      () => status(token),
      (polled) => polled.result.status,
    );
    expect(after.requests).toEqual([]);
    const noted = lateAnswerNoted('sep-1391');
    const late = await postAnswer(input.stack.url, { jsonrpc: '2.0', id: question.id, result: { ...APPROVE, _operation: { token } } });
    expect(late.status).toBe(400);
    expect(noted.entries).toEqual(NOTED_TIMED_OUT);
    expect(JSON.parse(late.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32602, message: expect.stringMatching(LATE) } });
    await pollUntilStatus(() => legacyRequest(input.stack.url, 'tools/async/status', { token }, { capabilities: CAPABILITIES }), ['completed'], {
      timeout: 15_000,
    });
    const final = ok(await legacyRequest(input.stack.url, 'tools/async/result', { token }, { capabilities: CAPABILITIES }));
    expect(textOf(final.result)).toBe(NOT_APPROVED);
  });
});

describe('2025-11-25 tasks', () => {
  it("once the question timed out, tasks/get reads working; a late response to the tasks/result question is HTTP 400, and tasks/result returns the Catch path's result", async () => {
    const headers = { 'mcp-session-id': (await initialize(input.stack.url, { elicitation: {} }))! };
    const request = (method: string, params: Record<string, unknown>) => legacyRequest(input.stack.url, method, params, { headers });
    const taskId = ok(await request('tools/call', { name: TOOL, arguments: {}, task: {} })).task.taskId as string;
    await pollUntilStatus(() => request('tasks/get', { taskId }), ['input_required'], { timeout: 10_000 });
    const stream = await openStream(input.stack.url, { jsonrpc: '2.0', id: `result-${taskId}`, method: 'tasks/result', params: { taskId } }, headers);
    const question = await stream.next();
    expect(question.method).toBe('elicitation/create');
    await untilWorking(
      async () => ok(await request('tasks/get', { taskId })),
      (task) => task.status,
    );
    const noted = lateAnswerNoted('tasks-2025-11-25');
    const late = await postAnswer(input.stack.url, { jsonrpc: '2.0', id: question.id, result: APPROVE }, headers);
    expect(late.status).toBe(400);
    expect(JSON.parse(late.text).error.message).toMatch(LATE);
    expect(noted.entries).toEqual(NOTED_TIMED_OUT);
    const [result] = await stream.rest();
    expect(textOf(result!.result)).toBe(NOT_APPROVED);
  });
});

describe('initialize-era synchronous call', () => {
  it("the call goes on past a question it never got answered; a late response is HTTP 400 and the call returns the Catch path's result", async () => {
    const version = '2025-06-18';
    const session = await initialize(input.stack.url, { elicitation: {} }, {}, version);
    const headers: Record<string, string> = { 'mcp-protocol-version': version, ...(session ? { 'mcp-session-id': session } : {}) };
    const stream = await openStream(
      input.stack.url,
      { jsonrpc: '2.0', id: `call-${randomUUID()}`, method: 'tools/call', params: { name: TOOL, arguments: {} } },
      headers,
    );
    const question = await stream.next();
    expect(question.method).toBe('elicitation/create');
    // Past the 2 s TimeoutSeconds, while the Catch path still runs.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const noted = lateAnswerNoted('sync');
    const late = await postAnswer(input.stack.url, { jsonrpc: '2.0', id: question.id, result: APPROVE }, headers);
    expect(late.status).toBe(400);
    expect(JSON.parse(late.text).error.message).toMatch(LATE);
    expect(noted.entries).toEqual(NOTED_TIMED_OUT);
    const [result] = await stream.rest();
    expect(textOf(result!.result)).toBe(NOT_APPROVED);
  });
});
