/**
 * The Tasks extension `io.modelcontextprotocol/tasks` (2026-07-28), client side: every request
 * declares the extension in its envelope; the server decides whether `tools/call` becomes a
 * task (`resultType: "task"`); `tasks/get` inlines the result or error once terminal, and
 * shows open questions as `inputRequests`, which `tasks/update` answers by key.
 */
import * as z from 'zod';
import { CallCancelledError, CallFailedError, type CallToolResult } from '../call-handle.ts';
import {
  type AskedQuestion,
  CallToolResultSchema,
  type DialectAdapter,
  JsonRpcErrorSchema,
  modernToolCall,
  parseAnswer,
  progressMeta,
  questionOf,
  type RemoteStatus,
} from './dialect-adapter.ts';

const TaskSchema = z.looseObject({
  taskId: z.string().min(1),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  pollIntervalMs: z.number().optional(),
  result: z.unknown().optional(),
  error: JsonRpcErrorSchema.optional(),
  inputRequests: z.record(z.string(), z.looseObject({ method: z.string(), params: z.unknown().optional() })).optional(),
});

/** "If the status is input_required, the server MUST return inputRequests with all outstanding requests, keyed by the state's key." */
function askedOf(inputRequests: z.infer<typeof TaskSchema>['inputRequests']): AskedQuestion[] {
  const asked: AskedQuestion[] = [];
  for (const [key, request] of Object.entries(inputRequests ?? {})) {
    const question = questionOf(key, request.method, request.params);
    if (question) asked.push({ question });
  }
  return asked;
}

function toStatus(task: z.infer<typeof TaskSchema>): RemoteStatus {
  const status: RemoteStatus = {
    state: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    ...(task.pollIntervalMs === undefined ? {} : { pollIntervalMs: task.pollIntervalMs }),
    ...(task.status === 'input_required' ? { questions: askedOf(task.inputRequests) } : {}),
  };
  // "completed ... This includes tool calls that returned results with isError: true"; "failed" carries the JSON-RPC error.
  if (task.status === 'completed' && task.result !== undefined)
    status.inline = { result: withoutResultType(parseAnswer(CallToolResultSchema, task.result, 'tasks/get result')) };
  if (task.status === 'failed' && task.error) {
    status.inline = { error: task.error };
    status.error = task.error.message;
  }
  return status;
}

function withoutResultType(result: CallToolResult): CallToolResult {
  const { resultType: _resultType, ...rest } = result;
  return rest as CallToolResult;
}

export const tasksExtension: DialectAdapter = {
  async start(connection, tool, args, options) {
    const answer = await modernToolCall(connection, { name: tool, arguments: args, ...progressMeta(options) }, options);
    if (answer.resultType !== 'task') return { kind: 'sync', result: withoutResultType(parseAnswer(CallToolResultSchema, answer, 'tools/call')) };
    const task = parseAnswer(TaskSchema, answer, 'tools/call');
    return { kind: 'async', remoteId: task.taskId, status: toStatus(task) };
  },

  async status(connection, remoteId, signal) {
    return toStatus(parseAnswer(TaskSchema, await connection.modern('tasks/get', { taskId: remoteId }, signal ? { signal } : {}), 'tasks/get'));
  },

  async result(connection, remoteId, status, signal) {
    const final = status.inline ? status : await this.status(connection, remoteId, signal);
    if (final.state === 'cancelled') throw new CallCancelledError(final.statusMessage);
    if (final.inline && 'result' in final.inline) return final.inline.result;
    const error = final.inline?.error;
    throw new CallFailedError(error?.message ?? final.statusMessage ?? `The task ended ${final.state}`, error ?? {});
  },

  async cancel(connection, remoteId, signal) {
    await connection.modern('tasks/cancel', { taskId: remoteId }, signal ? { signal } : {});
  },

  async questions(connection, remoteId, signal, current) {
    return (current?.questions ? current : await this.status(connection, remoteId, signal)).questions ?? [];
  },

  async answer(connection, remoteId, asked, answer, signal) {
    // `tasks/update` carries `inputResponses` keyed as `inputRequests` were; "A server MAY accept a
    // partial set of responses", so each question is answered on its own.
    await connection.modern('tasks/update', { taskId: remoteId, inputResponses: { [asked.question.key]: answer } }, signal ? { signal } : {});
  },
};
