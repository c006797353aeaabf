/**
 * 2025-11-25 tasks (SEP-1686), client side: `tools/call` with `params.task`, then `tasks/get`
 * to poll and `tasks/result` for the outcome. A tool failure is `failed` here, and
 * `tasks/result` still returns its `isError` result. Open questions arrive as server-to-client
 * requests on the stream of `tasks/result`, and are answered by a POSTed JSON-RPC response.
 */
import * as z from 'zod';
import { CallCancelledError, CallFailedError } from '../call-handle.ts';
import { isObject } from '../../lambdas/shared/json-values.ts';
import { McpRpcError, type McpConnection, type ServerRequest } from '../mcp-connection.ts';
import { askedIn, CallToolResultSchema, parseAnswer, progressMeta, type AskedQuestion, type DialectAdapter, type RemoteStatus } from './dialect-adapter.ts';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
/**
 * The stream says nothing when it has sent every open question: they come together, one
 * after another, as soon as it opens. A pause this long after the last ends the read.
 */
const QUESTIONS_QUIET_MS = 300;
/** How long to wait for the first question on a task that reads input_required. */
const QUESTIONS_WAIT_MS = 10_000;

const TaskSchema = z.looseObject({
  taskId: z.string().min(1),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  pollInterval: z.number().optional(),
});

function toStatus(task: z.infer<typeof TaskSchema>): RemoteStatus {
  return {
    state: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    ...(task.pollInterval === undefined ? {} : { pollIntervalMs: task.pollInterval }),
  };
}

export const tasks20251125: DialectAdapter = {
  async start(connection, tool, args, options) {
    const task = options.keepAliveSeconds === undefined ? {} : { ttl: options.keepAliveSeconds * 1000 };
    const answer = await connection.legacy('tools/call', { name: tool, arguments: args, task, ...progressMeta(options) }, options);
    const created = parseAnswer(z.looseObject({ task: TaskSchema }), answer, 'tools/call');
    return { kind: 'async', remoteId: created.task.taskId, status: toStatus(created.task) };
  },

  async status(connection, remoteId, signal) {
    return toStatus(parseAnswer(TaskSchema, await connection.legacy('tasks/get', { taskId: remoteId }, signal ? { signal } : {}), 'tasks/get'));
  },

  async result(connection, remoteId, status, signal) {
    if (status.state === 'cancelled') throw new CallCancelledError(status.statusMessage);
    try {
      // "If the underlying request resulted in a JSON-RPC error, tasks/result MUST return that same JSON-RPC error."
      return parseAnswer(CallToolResultSchema, await connection.legacy('tasks/result', { taskId: remoteId }, signal ? { signal } : {}), 'tasks/result');
    } catch (error) {
      if (error instanceof McpRpcError) throw new CallFailedError(error.message, { code: error.code, data: error.data }, { cause: error });
      throw error;
    }
  },

  async questions(connection, remoteId, signal, current) {
    if ((current ?? (await this.status(connection, remoteId, signal))).state !== 'input_required') return [];
    return readQuestions(connection, remoteId, signal);
  },

  async answer(connection, _remoteId, asked, answer, signal) {
    if (asked.requestId === undefined) throw new Error(`The question "${asked.question.key}" has no request to answer`);
    await connection.respond(asked.requestId, { ...answer }, signal);
  },

  async cancel(connection, remoteId, signal) {
    try {
      await connection.legacy('tasks/cancel', { taskId: remoteId }, signal ? { signal } : {});
    } catch (error) {
      // "Receivers MUST reject cancellation requests for tasks already in a terminal status ... with error code -32602":
      // the task finished first, which is not a failure of the cancel.
      if (error instanceof McpRpcError && error.code === -32602 && /terminal/i.test(error.message)) return;
      throw error;
    }
  },
};

/**
 * The open questions of a task, read off the stream of a `tasks/result` that is then
 * abandoned ("When the requestor encounters the input_required status, it SHOULD
 * preemptively call tasks/result"; the task goes on whether or not anyone waits for it).
 */
async function readQuestions(connection: McpConnection, taskId: string, signal?: AbortSignal): Promise<AskedQuestion[]> {
  const stop = new AbortController();
  const requests: ServerRequest[] = [];
  let quiet: ReturnType<typeof setTimeout> | undefined;
  const bound = setTimeout(() => stop.abort(), QUESTIONS_WAIT_MS);
  const onRequest = (request: ServerRequest) => {
    // "The receiver MUST include the io.modelcontextprotocol/related-task metadata in the request to associate it with the task."
    const related = isObject(request.params._meta) ? request.params._meta[RELATED_TASK] : undefined;
    if (isObject(related) && related.taskId !== taskId) return;
    requests.push(request);
    clearTimeout(quiet);
    quiet = setTimeout(() => stop.abort(), QUESTIONS_QUIET_MS);
  };
  try {
    await connection.legacy('tasks/result', { taskId }, { onRequest, signal: signal ? AbortSignal.any([signal, stop.signal]) : stop.signal });
    // The task ended while we listened: nothing is open any more.
    return [];
  } catch (error) {
    if (signal?.aborted) throw error;
    // Our own abort ends the read; a NOT_READY at the server's bound, likewise, leaves what was asked.
    if (stop.signal.aborted || error instanceof McpRpcError) return askedIn(requests);
    throw error;
  } finally {
    clearTimeout(quiet);
    clearTimeout(bound);
  }
}
