/**
 * Progress and log lines a run reports (the built-in report_progress worker), on the local
 * stack: streamed as notifications to an initialize-era synchronous call that waits on the
 * run, filtered by the principal's `logging/setLevel`; shown by SEP-1391
 * `tools/async/status` and 2025-11-25 `tasks/get` while the run goes on.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { parseInputRequestId } from '../../lambdas/mcp/input/server-requests.ts';
import { PROGRESS_META_KEY } from '../../lambdas/mcp/calls/run-notifications.ts';
import { startInputStack, type InputStack } from '../support/input-stack.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus, rpcError } from '../support/rpc-assertions.ts';
import { openStream, postAnswer, type JsonRpcMessage } from '../support/sse-reader.ts';

const STEPS = [
  { progress: 1, total: 3, message: 'first step' },
  { progress: 2, total: 3, message: 'second step' },
  { progress: 3, total: 3, message: 'third step' },
];
const DEBUG_LINE = { level: 'debug', logger: 'steps', data: { phase: 'preparing' } };
const INFO_LINE = { level: 'info', logger: 'steps', data: 'starting' };
const WARNING_LINE = { level: 'warning', data: 'careful' };

let input: InputStack;
beforeAll(async () => {
  input = await startInputStack();
});
afterAll(async () => {
  await input?.close();
});

/** A v1 SDK client of its own principal, keeping every log notification it gets. */
async function v1Client(options: { elicitation?: (progress: Progress[]) => Promise<void> } = {}) {
  const principal = `principal-${randomUUID()}`;
  const client = new Client({ name: 'progress-and-logging', version: '1.0.0' }, { capabilities: options.elicitation ? { elicitation: {} } : {} });
  const logs: unknown[] = [];
  const progress: Progress[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push(notification.params);
  });
  if (options.elicitation) {
    const answer = options.elicitation;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      await answer(progress);
      return { action: 'accept', content: {} };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(input.stack.url, { requestInit: { headers: { authorization: `Bearer ${principal}` } } }));
  const call = (name: string) => client.callTool({ name, arguments: {} }, undefined, { onprogress: (p) => progress.push(p) });
  return { client, logs, progress, call };
}

/** The notifications on a raw stream before its response, and the response. */
async function untilResponse(stream: Awaited<ReturnType<typeof openStream>>): Promise<{ notifications: JsonRpcMessage[]; response: JsonRpcMessage }> {
  const messages = await stream.rest();
  const response = messages.pop()!;
  return { notifications: messages, response };
}

describe('an initialize-era synchronous call over SSE', () => {
  it("the v1 Client's onprogress gets each progress report while the run still waits on the client, then the rest before the result", async () => {
    const { client, progress, call } = await v1Client({
      // The run cannot go on before this answer: the first report reached the client while it ran.
      elicitation: (seen) => vi.waitFor(() => expect(seen).toEqual([{ progress: 1, total: 2, message: 'asking' }]), { timeout: 10_000 }),
    });
    try {
      const result = await call('progress_then_ask');
      expect(result.content).toEqual([{ type: 'text', text: 'finished' }]);
      expect(progress).toEqual([
        { progress: 1, total: 2, message: 'asking' },
        { progress: 2, total: 2, message: 'answered' },
      ]);
    } finally {
      await client.close();
    }
  });

  it('every progress report and every log line at info and above reaches the v1 Client, each once and in order, not only the latest (no level set: info)', async () => {
    const { client, logs, progress, call } = await v1Client();
    try {
      const result = await call('progress_steps');
      expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
      expect(progress).toEqual(STEPS);
      expect(logs).toEqual([INFO_LINE, WARNING_LINE]);
    } finally {
      await client.close();
    }
  });

  it('logging/setLevel warning filters info lines for that principal only; debug lets every line through', async () => {
    const quiet = await v1Client();
    const verbose = await v1Client();
    const other = await v1Client();
    try {
      await quiet.client.setLoggingLevel('warning');
      await verbose.client.setLoggingLevel('debug');
      await Promise.all([quiet.call('progress_steps'), verbose.call('progress_steps'), other.call('progress_steps')]);
      expect(quiet.logs).toEqual([WARNING_LINE]);
      expect(verbose.logs).toEqual([DEBUG_LINE, INFO_LINE, WARNING_LINE]);
      expect(other.logs).toEqual([INFO_LINE, WARNING_LINE]);
      // Progress is not a log line: no level filters it.
      expect(quiet.progress).toEqual(STEPS);
    } finally {
      await Promise.all([quiet.client.close(), verbose.client.close(), other.client.close()]);
    }
  });

  it('logging/setLevel with a level that is none of the eight is -32602', async () => {
    const error = rpcError(await legacyRequest(input.stack.url, 'logging/setLevel', { level: 'verbose' }));
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining('level must be one of debug, info, notice') });
  });

  it('the logging capability is declared at initialize', async () => {
    const params = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } };
    expect(ok(await legacyRequest(input.stack.url, 'initialize', params)).capabilities).toMatchObject({ logging: {} });
  });

  it('a call without a progressToken gets no progress notifications; its log lines still come, all before the result', async () => {
    const stream = await openStream(input.stack.url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'progress_steps', arguments: {} } });
    const { notifications, response } = await untilResponse(stream);
    expect(notifications).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: INFO_LINE },
      { jsonrpc: '2.0', method: 'notifications/message', params: WARNING_LINE },
    ]);
    expect(response).toMatchObject({ id: 5, result: { content: [{ type: 'text', text: 'done' }] } });
  });

  it('the waiting call reads reports from the store: one a second, fresh app instance writes reaches its stream', async () => {
    const meta = { progressToken: 'from-the-store', 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
    const stream = await openStream(input.stack.url, {
      jsonrpc: '2.0',
      id: 6,
      method: 'tools/call',
      params: { name: 'progress_then_ask', arguments: {}, _meta: meta },
    });
    const early = [await stream.next(), await stream.next()];
    const question = early.find((message) => message.method === 'elicitation/create')!;
    expect(early.find((message) => message.method === 'notifications/progress')?.params).toEqual({
      progressToken: 'from-the-store',
      progress: 1,
      total: 2,
      message: 'asking',
    });

    const fresh = input.freshInstance();
    const key = { ownerId: ownerIdFor('local'), token: parseInputRequestId(question.id)!.token! };
    const { executionName } = await fresh.operations.readLive(key);
    await fresh.operations.reports.report({ operation: key, executionName, report: { progress: 1.5, total: 2, message: 'from another instance' } });
    expect(await stream.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 'from-the-store', progress: 1.5, total: 2, message: 'from another instance' },
    });

    expect((await postAnswer(input.stack.url, { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: {} } })).status).toBe(202);
    const { notifications, response } = await untilResponse(stream);
    expect(notifications.map((message) => message.params)).toEqual([{ progressToken: 'from-the-store', progress: 2, total: 2, message: 'answered' }]);
    expect(response).toMatchObject({ id: 6, result: { content: [{ type: 'text', text: 'finished' }] } });
  });
});

describe('status answers while the run goes on', () => {
  it('SEP-1391 tools/async/status carries the latest progress, and the statusMessage follows its message', async () => {
    const token = `progress-${randomUUID()}`;
    const lro = { capabilities: { experimental: { longRunningOperations: {} } } };
    ok(await legacyRequest(input.stack.url, 'tools/call', { name: 'progress_steps', arguments: {}, operation: { token } }, lro));
    const status = () => legacyRequest(input.stack.url, 'tools/async/status', { token });
    await vi.waitFor(async () => expect(ok(await status())).toMatchObject({ status: 'working', statusMessage: 'second step', progress: STEPS[1] }), {
      interval: 100,
      timeout: 15_000,
    });
    expect(await pollUntilStatus(status, ['completed'])).toMatchObject({ progress: STEPS[2] });
  });

  it(`2025-11-25 tasks/get carries the statusMessage, and the latest progress in _meta["${PROGRESS_META_KEY}"]`, async () => {
    const created = ok(await legacyRequest(input.stack.url, 'tools/call', { name: 'progress_steps', arguments: {}, task: {} }));
    const get = () => legacyRequest(input.stack.url, 'tasks/get', { taskId: created.task.taskId });
    await vi.waitFor(
      async () => expect(ok(await get())).toMatchObject({ status: 'working', statusMessage: 'second step', _meta: { [PROGRESS_META_KEY]: STEPS[1] } }),
      { interval: 100, timeout: 15_000 },
    );
    expect(await pollUntilStatus(get, ['completed'])).toMatchObject({ _meta: { [PROGRESS_META_KEY]: STEPS[2] } });
  });

  it(`Tasks-extension tasks/get carries the statusMessage, and the latest progress in _meta["${PROGRESS_META_KEY}"]`, async () => {
    const tasks = { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
    const created = ok(await modernRequest(input.stack.url, 'tools/call', { name: 'progress_steps', arguments: {} }, tasks));
    const get = () => modernRequest(input.stack.url, 'tasks/get', { taskId: created.taskId }, tasks);
    await vi.waitFor(
      async () => expect(ok(await get())).toMatchObject({ status: 'working', statusMessage: 'second step', _meta: { [PROGRESS_META_KEY]: STEPS[1] } }),
      { interval: 100, timeout: 15_000 },
    );
    expect(await pollUntilStatus(get, ['completed'])).toMatchObject({ _meta: { [PROGRESS_META_KEY]: STEPS[2] } });
  });

  it('a task that reported nothing has no progress _meta', async () => {
    const created = ok(await legacyRequest(input.stack.url, 'tools/call', { name: 'ask_confirm', arguments: { subject: 'x' }, task: {} }));
    expect(ok(await legacyRequest(input.stack.url, 'tasks/get', { taskId: created.task.taskId }))).not.toHaveProperty('_meta');
  });
});
