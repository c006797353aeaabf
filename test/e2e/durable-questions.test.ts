/**
 * A durable function asking the client mid-run (askClient, a durable callback in place of a
 * task token), in the two dialects whose questions travel on streams: SEP-1391, on the stream
 * of a `tools/async/status`, and 2025-11-25 tasks, on the stream of `tasks/result`. The answer
 * resumes the callback (SendDurableExecutionCallbackSuccess) and the run ends as
 * approve_deployment's does. The Tasks extension, MRTR and handle tools are held in
 * approve-deployment.test.ts and handle-tools-input.test.ts for both twins.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInputRequestId } from '../../lambdas/mcp/input/server-requests.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { initialize } from '../support/input-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';
import { SEP_1391_CAPABILITIES, untilAskedOnStatus } from '../support/sep-1391-status.ts';
import { openStream, postAnswer } from '../support/sse-reader.ts';

const TOOL = 'approve_deployment_durable';
const CHANGES = ['api: v2.3.1', 'web: v1.9.0'];
const LRO = SEP_1391_CAPABILITIES;

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('SEP-1391: the question on the stream of tools/async/status', () => {
  it('"input_required" with the approval request carrying _operation.token; the answer resumes the durable callback and the changes deploy', async () => {
    const token = `tok-${randomUUID()}`;
    ok(
      await legacyRequest(
        stack.url,
        'tools/call',
        { name: TOOL, arguments: { environment: 'prod', changes: CHANGES }, operation: { token } },
        { capabilities: LRO },
      ),
    );
    const asked = await untilAskedOnStatus(stack.url, token);
    expect(asked.requests).toEqual([
      {
        jsonrpc: '2.0',
        id: expect.any(String),
        method: 'elicitation/create',
        params: { message: expect.stringContaining('Deploy 2 changes to prod?'), requestedSchema: expect.any(Object), _operation: { token } },
      },
    ]);
    expect(parseInputRequestId(asked.requests[0]!.id)).toEqual({ token, key: 'approval' });
    const reply = { jsonrpc: '2.0', id: asked.requests[0]!.id, result: { action: 'accept', content: { comment: 'ok' }, _operation: { token } } };
    expect((await postAnswer(stack.url, reply)).status).toBe(202);
    await pollUntilStatus(() => legacyRequest(stack.url, 'tools/async/status', { token }, { capabilities: LRO }), ['completed'], { timeout: 15_000 });
    const final = ok(await legacyRequest(stack.url, 'tools/async/result', { token }, { capabilities: LRO }));
    expect(final.result.structuredContent).toMatchObject({ environment: 'prod', planned: 2, deployed: true, decision: 'accept', comment: 'ok' });
  });
});

describe('2025-11-25 tasks: the question on the stream of tasks/result', () => {
  it('tasks/result carries the elicitation with related-task _meta; the answer resumes the callback and tasks/result returns the deployment', async () => {
    const headers = { 'mcp-session-id': (await initialize(stack.url, { elicitation: {} }))! };
    const { task } = ok(
      await legacyRequest(stack.url, 'tools/call', { name: TOOL, arguments: { environment: 'qa', changes: CHANGES }, task: {} }, { headers }),
    );
    const taskId = task.taskId as string;
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }, { headers }), ['input_required'], { timeout: 15_000 });
    const stream = await openStream(stack.url, { jsonrpc: '2.0', id: `result-${taskId}`, method: 'tasks/result', params: { taskId } }, headers);
    const question = await stream.next();
    expect(question).toMatchObject({
      method: 'elicitation/create',
      params: { message: expect.stringContaining('Deploy 2 changes to qa?'), _meta: { 'io.modelcontextprotocol/related-task': { taskId } } },
    });
    expect((await postAnswer(stack.url, { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: {} } }, headers)).status).toBe(202);
    const [result] = await stream.rest();
    expect(result?.result?.structuredContent).toMatchObject({ environment: 'qa', deployed: true, decision: 'accept' });
    expect(ok(await legacyRequest(stack.url, 'tasks/get', { taskId }, { headers })).status).toBe('completed');
  });

  it('cancel while the durable function waits for its answer: the task is cancelled and the waiting tasks/result says so', async () => {
    const headers = { 'mcp-session-id': (await initialize(stack.url, { elicitation: {} }))! };
    const { task } = ok(await legacyRequest(stack.url, 'tools/call', { name: TOOL, arguments: { environment: 'qa', changes: ['x'] }, task: {} }, { headers }));
    const taskId = task.taskId as string;
    const stream = await openStream(stack.url, { jsonrpc: '2.0', id: `result-${taskId}`, method: 'tasks/result', params: { taskId } }, headers);
    await stream.next();
    expect(ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId }, { headers })).status).toBe('cancelled');
    expect((await stream.rest())[0]!.error).toEqual({ code: -32602, message: 'Task was cancelled' });
  });
});
