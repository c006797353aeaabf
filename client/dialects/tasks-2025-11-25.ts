/**
 * 2025-11-25 tasks (SEP-1686), client side: `tools/call` with `params.task`, then `tasks/get`
 * to poll and `tasks/result` for the outcome. A tool failure is `failed` here, and
 * `tasks/result` still returns its `isError` result.
 */
import * as z from 'zod';
import { CallCancelledError, CallFailedError } from '../call-handle.ts';
import { McpRpcError } from '../mcp-connection.ts';
import { CallToolResultSchema, parseAnswer, progressMeta, type DialectAdapter, type RemoteStatus } from './dialect-adapter.ts';

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
