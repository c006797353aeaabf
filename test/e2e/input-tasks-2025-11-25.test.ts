/**
 * Input mid-run in 2025-11-25 tasks (SEP-1686), on the local stack: the task shows
 * `input_required`, the client's `tasks/result` receives each question on its SSE stream
 * with the related-task `_meta`, and the client's JSON-RPC response, POSTed to any
 * instance, resumes the execution. Test names quote the 2025-11-25 tasks specification.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInputRequestId } from '../../lambdas/mcp/input/server-requests.ts';
import { initialize, postTo, startInputStack, type InputStack } from '../support/input-stack.ts';
import { legacyRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';
import { openStream, postAnswer, type JsonRpcMessage } from '../support/sse-reader.ts';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

let input: InputStack;
let headers: Record<string, string>;
beforeAll(async () => {
  input = await startInputStack();
  headers = { 'mcp-session-id': (await initialize(input.stack.url, { elicitation: {}, sampling: {} }))! };
});
afterAll(async () => {
  await input?.close();
});

const request = (method: string, params: Record<string, unknown>) => legacyRequest(input.stack.url, method, params, { headers });
const answer = (question: JsonRpcMessage, reply: { result: unknown } | { error: unknown }) =>
  postAnswer(input.stack.url, { jsonrpc: '2.0', id: question.id, ...reply }, headers);
const taskResult = (taskId: string) =>
  openStream(input.stack.url, { jsonrpc: '2.0', id: `result-${taskId}`, method: 'tasks/result', params: { taskId } }, headers);

async function startTask(name: string, args: Record<string, unknown>): Promise<string> {
  return ok(await request('tools/call', { name, arguments: args, task: {} })).task.taskId as string;
}

function waitForInputRequired(taskId: string) {
  return pollUntilStatus(() => request('tasks/get', { taskId }), ['input_required'], { timeout: 10_000 });
}

describe('raw HTTP', () => {
  it('the task shows input_required; tasks/result carries the elicitation with related-task _meta; a fresh instance takes the answer and tasks/result returns the result', async () => {
    const taskId = await startTask('ask_confirm', { subject: 'the migration' });
    // "When the task receiver has messages for the requestor that are necessary to complete the task, the receiver SHOULD move the task to the input_required status."
    await waitForInputRequired(taskId);
    const stream = await taskResult(taskId);
    const question = await stream.next();
    // "The receiver MUST include the io.modelcontextprotocol/related-task metadata in the request to associate it with the task."
    expect(question).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Go ahead with the migration?', _meta: { [RELATED_TASK]: { taskId } } },
    });
    expect(parseInputRequestId(question.id)).toEqual({ token: taskId, key: 'confirm' });
    const taken = await postTo(
      input.freshInstance(),
      input.stack.url,
      { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { comment: 'go' } } },
      headers,
    );
    expect(taken).toEqual({ status: 202, text: '' });
    const [result, ...after] = await stream.rest();
    expect(after).toEqual([]);
    // "The tasks/result operation MUST include this metadata in its response"
    expect(result!.result).toMatchObject({ structuredContent: { action: 'accept', content: { comment: 'go' } }, _meta: { [RELATED_TASK]: { taskId } } });
    expect(ok(await request('tasks/get', { taskId })).status).toBe('completed');
  });

  it('two questions asked at once (a Parallel state) both come on the stream, and are answered separately', async () => {
    const taskId = await startTask('ask_two', {});
    const stream = await taskResult(taskId);
    const questions = [await stream.next(), await stream.next()];
    expect(questions.map((q) => parseInputRequestId(q.id)?.key).sort()).toEqual(['first', 'second']);
    const byKey = Object.fromEntries(questions.map((q) => [parseInputRequestId(q.id)!.key, q]));
    expect((await answer(byKey.first!, { result: { action: 'accept', content: { value: 'a' } } })).status).toBe(202);
    expect(ok(await request('tasks/get', { taskId })).status).toBe('input_required');
    expect((await answer(byKey.second!, { result: { action: 'accept', content: { value: 'b' } } })).status).toBe(202);
    expect((await stream.rest())[0]!.result.content).toEqual([{ type: 'text', text: 'first=a second=b' }]);
  });

  it('a question asked after tasks/result began waiting still reaches its stream', async () => {
    const taskId = await startTask('draft_and_confirm', { topic: 'tides' });
    const stream = await taskResult(taskId);
    expect((await answer(await stream.next(), { result: { role: 'assistant', content: { type: 'text', text: 'Tides turn.' }, model: 'm' } })).status).toBe(202);
    const second = await stream.next();
    expect(second).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Publish this draft? Tides turn.', _meta: { [RELATED_TASK]: { taskId } } },
    });
    expect((await answer(second, { result: { action: 'decline' } })).status).toBe(202);
    expect((await stream.rest())[0]!.result.content[0].text).toBe('declined: {"action":"decline"}');
  });

  it('cancel while waiting: tasks/cancel stops the task and the waiting tasks/result says it was cancelled', async () => {
    const taskId = await startTask('ask_confirm', { subject: 'x' });
    const stream = await taskResult(taskId);
    await stream.next();
    expect(ok(await request('tasks/cancel', { taskId })).status).toBe('cancelled');
    expect((await stream.rest())[0]!.error).toEqual({ code: -32602, message: 'Task was cancelled' });
  });
});

describe('the v1 SDK Client (experimental tasks) with elicitation and sampling handlers', () => {
  let client: Client;
  const asked: Array<{ method: string; taskId?: string }> = [];
  beforeAll(async () => {
    client = new Client({ name: 'input-tasks-v1', version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push({ method: request.method, taskId: (request.params._meta?.[RELATED_TASK] as { taskId?: string } | undefined)?.taskId });
      return { role: 'assistant', content: { type: 'text', text: 'Stars drift.' }, model: 'm' };
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push({ method: request.method, taskId: (request.params._meta?.[RELATED_TASK] as { taskId?: string } | undefined)?.taskId });
      return { action: 'accept', content: { comment: 'fine' } };
    });
    await client.connect(new StreamableHTTPClientTransport(input.stack.url));
  });
  afterAll(async () => {
    await client?.close();
  });

  it('callToolStream: taskCreated, input_required, both handlers asked through tasks/result, then the result', async () => {
    const statuses: string[] = [];
    let taskId: string | undefined;
    let result: { content?: Array<{ text?: string }> } | undefined;
    for await (const message of client.experimental.tasks.callToolStream({ name: 'draft_and_confirm', arguments: { topic: 'stars' } }, undefined, {
      task: { ttl: 60_000 },
    })) {
      if (message.type === 'error') throw message.error;
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'taskStatus') statuses.push(message.task.status);
      if (message.type === 'result') result = message.result as typeof result;
    }
    expect(statuses).toContain('input_required');
    expect(asked).toEqual([
      { method: 'sampling/createMessage', taskId },
      { method: 'elicitation/create', taskId },
    ]);
    expect(result!.content![0]!.text).toBe('published: Stars drift. {"comment":"fine"}');
  });
});
