/**
 * Input mid-run on the Tasks extension (io.modelcontextprotocol/tasks, 2026-07-28) against
 * the local stack: `tasks/get` shows a task's open questions as `inputRequests`,
 * `tasks/update` answers them, and a tool that asks before its task exists runs multi
 * round-trip rounds first (SEP-2322), then returns the task. Raw HTTP for the wire rules,
 * the ext-tasks client session for the real-client flow. Test names quote the extension's
 * specification where it says MUST or SHOULD.
 */
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createApplicationInputHandler, createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { CreateTaskResultV2Schema, GetTaskResultV2Schema, UpdateTaskResultV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbRecordStore } from '../../lambdas/aws/dynamodb-record-store.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { startInputStack, type InputStack } from '../support/input-stack.ts';
import { captureLogs } from '../support/log-capture.ts';
import { MODERN_VERSION, modernDispatch, modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus, rpcError } from '../support/rpc-assertions.ts';

const EXTENSION = 'io.modelcontextprotocol/tasks';
/** A task-capable client that can answer elicitation and sampling. */
const CAPS = { elicitation: {}, sampling: {}, extensions: { [EXTENSION]: {} } };

let input: InputStack;
let sfn: SFNClient;

beforeAll(async () => {
  input = await startInputStack();
  sfn = new SFNClient({ region: 'us-east-1', endpoint: input.stack.sfnEndpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
});
afterAll(async () => {
  sfn?.destroy();
  await input?.close();
});

function ext(method: string, params: Record<string, unknown> = {}, options: CallOptions = {}) {
  return modernRequest(input.stack.url, method, params, { capabilities: CAPS, ...options });
}
const getTask = (taskId: string, options: CallOptions = {}) => ext('tasks/get', { taskId }, options);
const update = (taskId: string, inputResponses: Record<string, unknown>, options: CallOptions = {}) => ext('tasks/update', { taskId, inputResponses }, options);
const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });

async function startTask(name: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<string> {
  const created = ok(await ext('tools/call', { name, arguments: args }, options));
  expect(created.resultType).toBe('task');
  return created.taskId as string;
}

/** Polls tasks/get until the task waits for input, and returns that task. */
function untilInputRequired(taskId: string, options: CallOptions = {}) {
  return pollUntilStatus(() => getTask(taskId, options), ['input_required'], { timeout: 15_000 });
}
function untilTerminal(taskId: string, options: CallOptions = {}) {
  return pollUntilStatus(() => getTask(taskId, options), ['completed', 'failed', 'cancelled'], { timeout: 15_000 });
}

describe('tasks/get and tasks/update', () => {
  it("If the status is input_required, the server MUST return inputRequests with all outstanding requests, keyed by the state's key", async () => {
    const taskId = await startTask('ask_confirm', { subject: 'the migration' });
    const task = await untilInputRequired(taskId);
    expect(GetTaskResultV2Schema.safeParse(task).success).toBe(true);
    expect(task).toMatchObject({ resultType: 'complete', taskId, status: 'input_required' });
    expect(task.inputRequests).toEqual({
      confirm: {
        method: 'elicitation/create',
        params: { message: 'Go ahead with the migration?', requestedSchema: { type: 'object', properties: { comment: { type: 'string' } } } },
      },
    });
    // The waiting state's task token is the server's secret.
    expect(JSON.stringify(task)).not.toMatch(/taskToken/);
  });

  it('a question whose answer is being delivered is no longer outstanding: with only those left, the task shows working', async () => {
    const taskId = await startTask('ask_confirm', { subject: 'in flight' });
    await untilInputRequired(taskId);
    const key = { ownerId: ownerIdFor('local'), token: taskId };
    const store = new DynamoDbRecordStore({ client: input.stack.awsClients.dynamodb, tableName: input.stack.dynamo.tableName });
    // What an instance delivering the answer writes first: its claim on the key.
    const record = (await store.get(key))!;
    const claimed = await store.transition(
      key,
      ['input_required'],
      { pendingInputs: { confirm: { ...record.pendingInputs!.confirm!, answeringSince: Date.now() } }, updatedAt: record.updatedAt + 1 },
      { ifUpdatedAt: record.updatedAt },
    );
    expect(claimed?.status).toBe('input_required');
    const task = ok(await getTask(taskId));
    expect(GetTaskResultV2Schema.safeParse(task).success).toBe(true);
    expect(task).toMatchObject({ status: 'working', statusMessage: 'The operation is running.' });
    expect(task).not.toHaveProperty('inputRequests');
    // The claimed key takes no second answer, and the server says so (INFO).
    const ignored = captureLogs('answer ignored: no such question is open');
    ok(await update(taskId, { confirm: accept({ comment: 'second' }) }));
    expect(ok(await getTask(taskId)).status).toBe('working');
    expect(ignored.entries).toEqual([expect.objectContaining({ level: 'INFO', inputKey: 'confirm' })]);
    ok(await ext('tasks/cancel', { taskId }));
  });

  it('tasks/update with matching inputResponses is acked with {resultType:"complete"} and resumes the task to its result', async () => {
    const taskId = await startTask('ask_confirm', { subject: 'the migration' });
    await untilInputRequired(taskId);
    const ack = ok(await update(taskId, { confirm: accept({ comment: 'go' }) }));
    expect(UpdateTaskResultV2Schema.safeParse(ack).success).toBe(true);
    expect(Object.keys(ack).filter((k) => k !== '_meta')).toEqual(['resultType']);
    expect(ack.resultType).toBe('complete');
    const done = await untilTerminal(taskId);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'confirmed: {"comment":"go"}' }] } });
    expect(done).not.toHaveProperty('inputRequests');
  });

  it('A server MAY accept a partial set of responses: two questions answered in separate updates, and tasks/get shows only the still-pending key', async () => {
    const taskId = await startTask('ask_two', {});
    const both = await pollUntilStatus(async () => {
      const response = await getTask(taskId);
      expect(Object.keys(ok(response).inputRequests ?? {}).sort()).toEqual(['first', 'second']);
      return response;
    }, ['input_required']);
    expect(both.inputRequests.first).toMatchObject({ method: 'elicitation/create', params: { message: 'First?' } });
    expect(ok(await update(taskId, { first: accept({ value: 'one' }) })).resultType).toBe('complete');
    const partial = ok(await getTask(taskId));
    expect(partial.status).toBe('input_required');
    expect(Object.keys(partial.inputRequests)).toEqual(['second']);
    expect(ok(await update(taskId, { second: accept({ value: 'two' }) })).resultType).toBe('complete');
    const done = await untilTerminal(taskId);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'first=one second=two' }] } });
  });

  it('A server SHOULD ignore inputResponses for keys that have already been answered: a second answer to a key changes nothing', async () => {
    const taskId = await startTask('ask_two', {});
    await pollUntilStatus(async () => {
      const response = await getTask(taskId);
      expect(Object.keys(ok(response).inputRequests ?? {})).toHaveLength(2);
      return response;
    }, ['input_required']);
    expect(ok(await update(taskId, { first: accept({ value: 'one' }) })).resultType).toBe('complete');
    // The second answer to `first` is acked and ignored; `second` in the same update is taken.
    const ignored = captureLogs('answer ignored: no such question is open');
    expect(ok(await update(taskId, { first: accept({ value: 'uno' }), second: accept({ value: 'two' }), 'never-asked': accept({}) })).resultType).toBe(
      'complete',
    );
    expect(ignored.entries.map((entry) => entry.inputKey)).toEqual(['first', 'never-asked']);
    const done = await untilTerminal(taskId);
    expect(done.result.content[0].text).toBe('first=one second=two');
  });

  it('a declined elicitation resumes the state with Mcp.InputDeclined, and its Catch decides the result', async () => {
    const taskId = await startTask('ask_confirm', { subject: 'the deletion' });
    await untilInputRequired(taskId);
    ok(await update(taskId, { confirm: { action: 'decline' } }));
    const done = await untilTerminal(taskId);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'declined' }] } });
  });

  it('an answer of the wrong shape gets -32602 naming the field, and the question stays open', async () => {
    const taskId = await startTask('ask_confirm', { subject: 'shapes' });
    await untilInputRequired(taskId);
    expect(rpcError(await update(taskId, { confirm: { action: 'maybe' } }))).toMatchObject({
      code: -32602,
      message: expect.stringContaining('inputResponses.confirm.action'),
    });
    expect(Object.keys(ok(await getTask(taskId)).inputRequests)).toEqual(['confirm']);
  });

  it('tasks/cancel while the task waits for input stops the execution; a later answer is acked and ignored', async () => {
    const taskId = await startTask('ask_confirm', { subject: 'cancel me' });
    await untilInputRequired(taskId);
    ok(await ext('tasks/cancel', { taskId }));
    expect(ok(await getTask(taskId)).status).toBe('cancelled');
    const record = await input.stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token: taskId });
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: record.executionArn! }));
    expect(execution.status).toBe('ABORTED');
    const logs = captureLogs('answer ignored: its question had closed');
    expect(ok(await update(taskId, { confirm: accept({ comment: 'too late' }) })).resultType).toBe('complete');
    expect(ok(await getTask(taskId))).toMatchObject({ status: 'cancelled' });
    // Ignored, and logged as such: the question ended with its task.
    expect(logs.entries).toEqual([expect.objectContaining({ level: 'WARN', inputKey: 'confirm', reason: 'ended' })]);
  });

  it("Servers MUST perform authorization checks: another principal's tasks/update gets -32602 and answers nothing", async () => {
    const alice = { headers: { authorization: 'Bearer alice' } };
    const bob = { headers: { authorization: 'Bearer bob' } };
    const taskId = await startTask('ask_confirm', { subject: 'owned' }, alice);
    await untilInputRequired(taskId, alice);
    expect(rpcError(await update(taskId, { confirm: accept({ comment: 'bob' }) }, bob))).toMatchObject({
      code: -32602,
      message: 'Failed to retrieve task: Task not found',
    });
    expect(Object.keys(ok(await getTask(taskId, alice)).inputRequests)).toEqual(['confirm']);
  });

  it('any instance takes any answer: a second, fresh app instance over the same stores accepts the tasks/update', async () => {
    const taskId = await startTask('ask_confirm', { subject: 'elsewhere' });
    await untilInputRequired(taskId);
    const params = {
      taskId,
      inputResponses: { confirm: accept({ comment: 'from another instance' }) },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': CAPS,
      },
    };
    const request = new Request(input.stack.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': 'tasks/update',
        'mcp-name': taskId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'update-elsewhere', method: 'tasks/update', params }),
    });
    const response = await input.freshInstance().fetch(request, 'local');
    expect(JSON.parse(await response.text()).result).toMatchObject({ resultType: 'complete' });
    const done = await untilTerminal(taskId);
    expect(done.result.content[0].text).toBe('confirmed: {"comment":"from another instance"}');
  });
});

describe('multi round-trip requests before a task exists', () => {
  it("round 1 is an InputRequiredResult with no taskId; the final round returns CreateTaskResult with no requestState or inputRequests; the task's result reflects the answer", async () => {
    const first = ok(await ext('tools/call', { name: 'ask_before_task', arguments: {} }));
    expect(first.resultType).toBe('input_required');
    expect(first).not.toHaveProperty('taskId');
    expect(first.inputRequests).toEqual({
      user_name: {
        method: 'elicitation/create',
        params: { message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
      },
    });
    expect(typeof first.requestState).toBe('string');
    const created = ok(
      await ext('tools/call', {
        name: 'ask_before_task',
        arguments: {},
        inputResponses: { user_name: accept({ name: 'Alice' }) },
        requestState: first.requestState,
      }),
    );
    expect(CreateTaskResultV2Schema.safeParse(created).success).toBe(true);
    expect(created.resultType).toBe('task');
    expect(typeof created.taskId).toBe('string');
    for (const key of ['requestState', 'inputRequests', 'result']) expect(created).not.toHaveProperty(key);
    const done = await untilTerminal(created.taskId);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'Hello, Alice!' }] } });
  });

  it('a run still working when the ask-before-task bound passes is returned as a working task of the same execution', async () => {
    const args = { waitSeconds: 3 };
    const first = ok(await ext('tools/call', { name: 'ask_before_task', arguments: args }));
    expect(first.resultType).toBe('input_required');
    const created = ok(
      await ext('tools/call', {
        name: 'ask_before_task',
        arguments: args,
        inputResponses: { user_name: accept({ name: 'Bea' }) },
        requestState: first.requestState,
      }),
    );
    // Handed off at the tool's askBeforeTaskSeconds (1 s): the 3 s run is still going.
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const done = await untilTerminal(created.taskId);
    expect(done.result.content[0].text).toBe('Hello, Bea!');
  });

  it('a requestState issued on the synchronous wire is refused on the task wire: -32602', async () => {
    const plain = { capabilities: { elicitation: {} } };
    const round = ok(await modernRequest(input.stack.url, 'tools/call', { name: 'ask_confirm', arguments: { subject: 'wires' } }, plain));
    expect(round.resultType).toBe('input_required');
    const crossed = await ext('tools/call', { name: 'ask_confirm', arguments: { subject: 'wires' }, requestState: round.requestState });
    expect(rpcError(crossed)).toMatchObject({ code: -32602, message: expect.stringMatching(/another call/) });
  });
});

describe('the ext-tasks client session with its input handler', () => {
  async function connect() {
    const client = new Client({ name: 'e2e-input-tasks', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(input.stack.url));
    const asked: Array<{ message: unknown; delivery: string }> = [];
    const session = createTaskSessionFromClient(client, {
      endpointId: 'e2e-input-local',
      rawDispatch: modernDispatch(input.stack.url) as never,
      v2RequestFraming: { protocolVersion: MODERN_VERSION, clientInfo: { name: 'e2e-input-tasks', version: '1.0.0' }, clientCapabilities: { elicitation: {} } },
      onInputRequest: createApplicationInputHandler({
        elicitation: async (request, context) => {
          asked.push({ message: request.params.message, delivery: context.delivery });
          return { action: 'accept', content: { comment: 'from the session', name: 'Session' } };
        },
        sampling: async () => {
          throw new Error('not asked for sampling');
        },
        roots: async () => ({ roots: [] }),
      }),
    });
    return { client, session, asked };
  }

  it('a task that asks: the handler answers the elicitation through tasks/update and the task settles with that answer', async () => {
    const { client, session, asked } = await connect();
    try {
      const execution = await session.callTool('ask_confirm', { subject: 'the session' });
      expect(execution.kind).toBe('task');
      const { outcome } = await execution.settle();
      expect(resultFromTaskOutcome(outcome)).toMatchObject({ content: [{ type: 'text', text: 'confirmed: {"comment":"from the session","name":"Session"}' }] });
      expect(asked).toEqual([{ message: 'Go ahead with the session?', delivery: 'task-update' }]);
    } finally {
      await session.close();
      await client.close();
    }
  });

  it('a tool that asks before its task: the handler answers the retry, and the call becomes a task with that answer', async () => {
    const { client, session, asked } = await connect();
    try {
      const execution = await session.callTool('ask_before_task', {});
      expect(execution.kind).toBe('task');
      const { outcome } = await execution.settle();
      expect(resultFromTaskOutcome(outcome)).toMatchObject({ content: [{ type: 'text', text: 'Hello, Session!' }] });
      expect(asked).toEqual([{ message: 'What is your name?', delivery: 'request-retry' }]);
    } finally {
      await session.close();
      await client.close();
    }
  });
});
