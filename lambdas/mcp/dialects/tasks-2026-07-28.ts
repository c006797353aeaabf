/**
 * The MCP Tasks extension `io.modelcontextprotocol/tasks` (2026-07-28, SEP-2663):
 * server-directed tasks for requests that declare the extension, `tasks/get` with the
 * result inlined or the questions the run waits on (`inputRequests`), `tasks/update` with
 * their answers, and `tasks/cancel`. A tool that asks before its task exists
 * (`askBeforeTaskSeconds`) runs multi round-trip rounds first. For `subscriptions/listen`
 * (listen/listen-handler.ts) it reads each task the way `tasks/get` does, for
 * `notifications/tasks`. The only file that knows these wire names. Sentences quoted below are from the extension's specification.
 */
import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { statusMessageFor } from '../../operations/execution-outcome.ts';
import type { OperationRecord } from '../../operations/operation.ts';
import { OperationError } from '../../operations/operation-error.ts';
import type { SyncStepInput } from '../../operations/operations-service.ts';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import { answersOf, continueRetry, inputRequiredResult, retryEnded, runRound, type RoundCall } from '../input/input-responses.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import { PROGRESS_META_KEY, progressOf } from '../calls/run-notifications.ts';
import type { RequestView } from '../edge/request-view.ts';
import { ANY_RESULT, directOnId, finalResponse, readOwnRecord, serveDialectMethod, withIdFastPath } from './dialect-support.ts';
import { startOperationFor, type AsyncDialect, type CallRequest, type McpDeps, type StartRequest, type ToolListing } from './dialect.ts';
import { eventSourceFor } from '../events/event-source.ts';

/** The extension identifier, in capabilities and in `requiredCapabilities`. */
export const EXTENSION = 'io.modelcontextprotocol/tasks';
const DIALECT = 'tasks-2026-07-28';
const RETRIEVE_PREFIX = 'Failed to retrieve task';

type WireStatus = 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';

const TaskId = z.string({ message: 'taskId must be a string' }).min(1, 'taskId must not be empty');
const TaskIdParams = z.looseObject({ taskId: TaskId });
const TASK_ID_SCHEMAS = { params: withIdFastPath(TaskIdParams, 'taskId'), result: ANY_RESULT };

function declares(view: RequestView): boolean {
  return declaresTasksExtension(view.clientCapabilities);
}

/** "the server MUST return an error with the code -32021 (Missing Required Client Capability), indicating the required extension" */
function missingCapability(what: string): ProtocolError {
  return new ProtocolError(JSONRPC.MISSING_CAPABILITY, `Missing required client capability: ${what} needs the ${EXTENSION} extension`, {
    requiredCapabilities: { extensions: { [EXTENSION]: {} } },
  });
}

/** The `Task` fields every task-shaped answer carries. */
function taskFields(record: OperationRecord, status: WireStatus, statusMessage = record.statusMessage): Record<string, unknown> {
  return {
    taskId: record.token,
    status,
    ...(statusMessage === undefined ? {} : { statusMessage }),
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.updatedAt).toISOString(),
    // "Time-to-live duration from creation in integer milliseconds, null for unlimited." The core keeps
    // results keepAlive seconds past completion, so a task is never discarded before createdAt + ttlMs.
    ttlMs: record.keepAliveSeconds === null ? null : record.keepAliveSeconds * 1000,
    pollIntervalMs: record.pollIntervalSeconds * 1000,
  };
}

/** The DetailedTask for `tasks/get`, with the payload its status requires. */
function detailedTask(record: OperationRecord, deps: McpDeps): Record<string, unknown> {
  // "If the status is cancelled, the server MUST return a Task object with status cancelled."
  if (record.status === 'canceled') return taskFields(record, 'cancelled');
  const response = finalResponse(record, deps);
  if (!response) {
    // "The inputRequests field MUST contain all outstanding requests": the open ones. Questions
    // whose answers are being delivered are no longer the client's to answer; with only those
    // left, the task is back at work.
    const inputRequests = deps.operations.inputs.pending(record);
    if (Object.keys(inputRequests).length > 0) return { ...taskFields(record, 'input_required'), inputRequests };
    // "submitted" is no task status: by the time a task is returned it is working.
    return taskFields(record, 'working', record.status === 'input_required' ? statusMessageFor('working') : record.statusMessage);
  }
  if ('error' in response) {
    // "failed: The request failed due to a JSON-RPC error during execution. The task will include the error field"
    const message = record.status === 'failed' ? record.statusMessage : `The operation failed: ${response.error.message}`;
    return { ...taskFields(record, 'failed', message), error: response.error };
  }
  // "completed ... This includes tool calls that returned results with isError: true."
  // The inlined result is the tool call's own answer, so it carries its own resultType.
  return { ...taskFields(record, 'completed'), result: { ...response.result, resultType: 'complete' } };
}

/** The `tasks/get` result for a record: its DetailedTask, and the latest progress in `_meta`. */
function getTaskResult(record: OperationRecord, deps: McpDeps): Record<string, unknown> {
  // "The resultType field MUST be set to "complete" on this object". A Task has no progress
  // field: the latest progress the run reported goes in the result's `_meta`.
  const progress = progressOf(record);
  return { resultType: 'complete', ...detailedTask(record, deps), ...(progress === undefined ? {} : { _meta: { [PROGRESS_META_KEY]: progress } }) };
}

/** `tasks/get`: "Servers MUST return this error for non-declaring clients issuing tasks/get". */
async function getTask(taskId: string, view: RequestView, deps: McpDeps): Promise<Record<string, unknown>> {
  if (!declares(view)) throw missingCapability('tasks/get');
  return getTaskResult(await readOwnRecord(deps, { ownerId: view.ownerId, token: taskId }, DIALECT, 'Task'), deps);
}

/** Whether per-request client capabilities declare the extension. */
export function declaresTasksExtension(clientCapabilities: unknown): boolean {
  if (typeof clientCapabilities !== 'object' || clientCapabilities === null) return false;
  const extensions = (clientCapabilities as { extensions?: unknown }).extensions;
  return typeof extensions === 'object' && extensions !== null && EXTENSION in extensions;
}

/** The -32021 a listen request for task notifications gets from a client that did not declare the extension. */
export function taskNotificationsNeedExtension(): ProtocolError {
  // "Servers MUST return this error for non-declaring clients requesting task notifications on subscriptions/listen."
  return missingCapability('requesting task notifications on subscriptions/listen');
}

/** The method of a task status notification on a `subscriptions/listen` stream. */
export const TASK_NOTIFICATION = 'notifications/tasks';

/** A task as a listen stream reports it: the notification's params, and whether it can change again. */
export interface ListenedTask {
  params: Record<string, unknown>;
  /**
   * What a status change changes (status, open questions, outcome): a new value is worth a
   * notification. A new time or status message alone (the run's progress) is not: the stream
   * carries status changes, and progress stays on tasks/get.
   */
  change: string;
  terminal: boolean;
  pollIntervalMs: number;
}

/**
 * The caller's task for a `notifications/tasks`, read the way `tasks/get` reads it: "Each
 * notification carries a complete DetailedTask for the current status, identical to what
 * tasks/get would have returned at that moment" (`resultType` is the result's, not the task's).
 * `undefined` when the id names none of the caller's tasks (unknown, expired, another
 * principal's or another dialect's): such ids are left out, alike.
 */
export async function readListenedTask(deps: McpDeps, ownerId: string, taskId: string): Promise<ListenedTask | undefined> {
  let record: OperationRecord;
  try {
    record = await readOwnRecord(deps, { ownerId, token: taskId }, DIALECT, 'Task');
  } catch (error) {
    if (error instanceof OperationError && (error.code === 'NOT_FOUND' || error.code === 'EXPIRED')) return undefined;
    throw error;
  }
  const { resultType: _resultType, ...params } = getTaskResult(record, deps);
  const status = params.status as WireStatus;
  const change = JSON.stringify([status, params.inputRequests, params.result, params.error]);
  return {
    params,
    change,
    terminal: status === 'completed' || status === 'failed' || status === 'cancelled',
    pollIntervalMs: record.pollIntervalSeconds * 1000,
  };
}

/**
 * "Servers MUST set resultType to "task" when returning a CreateTaskResult"; result, error and
 * inputRequests live on tasks/get only (a fast task may already be finished here), and the
 * requestState of rounds before it never leaks into it.
 */
function createTaskResult(record: OperationRecord, deps: McpDeps, view: RequestView): Record<string, unknown> {
  const { result: _result, error: _error, inputRequests: _inputRequests, ...task } = detailedTask(record, deps);
  // Task Event Sources (draft): the task's progress as an event subscription, for a client that declared events.
  const eventSource = eventSourceFor(deps, record, view.clientCapabilities);
  return { resultType: 'task', ...task, ...(eventSource ? { eventSource } : {}) };
}

/** Whether a first call of `tool` runs a round before its task exists (only a STANDARD run can be resumed into one). */
function asksBeforeTask(tool: ToolSpec): boolean {
  return tool.workflowType === 'STANDARD' && (tool.timing.askBeforeTaskSeconds ?? 0) > 0;
}

/** A task for the call, started now. */
async function startTask(request: StartRequest, deps: McpDeps): Promise<Record<string, unknown>> {
  // "A server MUST NOT return CreateTaskResult until the task is durably created": start returns
  // only after the record is written and the execution started, and reads are strongly consistent.
  // "The notifications/cancelled notification MUST NOT be used for task cancellation": the core keeps
  // no alias for the request id; passing it lets this call supersede an older one's alias.
  const record = await startOperationFor(request, deps, DIALECT);
  return createTaskResult(record, deps, request.view);
}

/** The Tasks extension dialect: first in the router's order, modern era only. */
export const tasks20260728Dialect: AsyncDialect = {
  name: DIALECT,
  statusMethods: ['tasks/get'],
  answeredAtOnce: ['tasks/get', 'tasks/cancel'],
  answeredDirectly: { modern: { 'tasks/get': directOnId('taskId', getTask) } },

  claimsListing(view: RequestView): boolean {
    return view.era === 'modern' && declares(view);
  },

  /** Task-capable clients see every tool; the 2026-07-28 wire has no per-tool task field. */
  listTool(_tool: ToolSpec, base: ToolListing): ToolListing {
    return base;
  },

  /**
   * "The server is the sole decider": a declaring request gets a task for every tool that can
   * run as one, and a sync tool stays synchronous (a legacy `task` hint never promotes it).
   */
  claimsCall(_params: Record<string, unknown>, view: RequestView, tool: ToolSpec): boolean {
    return view.era === 'modern' && declares(view) && tool.invocation !== 'sync';
  },

  /** "If a server is unable to service a request to a client that does not declare this extension capability without returning CreateTaskResult, the server MUST return an error with the code -32021" */
  refuseAsyncOnly(tool: ToolSpec, view: RequestView): Error | undefined {
    if (view.era !== 'modern') return undefined;
    return missingCapability(`tool ${tool.name} runs only as a task, so calling it`);
  },

  capabilities(era): Record<string, unknown> {
    // "No extension-specific settings are currently defined; an empty object indicates support."
    return era === 'modern' ? { extensions: { [EXTENSION]: {} } } : {};
  },

  async call(request: CallRequest, deps: McpDeps): Promise<Record<string, unknown>> {
    const { tool, view } = request;
    const call: RoundCall = { tool, arguments: request.arguments, view, dialect: DIALECT };
    const resume = await continueRetry(request.ctx, call, deps);
    if ((resume !== undefined && tool.workflowType === 'STANDARD') || asksBeforeTask(tool)) {
      // "Server implementations that use multi round-trip requests in conjunction with task
      // creation ... SHOULD resolve all MRTR exchanges synchronously before responding with a
      // CreateTaskResult": questions asked within the bound go back as input_required (no
      // task yet); the round that sees none returns the task of that same operation.
      const round: SyncStepInput = {
        ownerId: view.ownerId,
        tool,
        arguments: request.arguments,
        requestId: view.requestKey,
        clientCapabilities: view.clientCapabilities,
        dialect: DIALECT,
        atBound: 'hand-off',
        boundSeconds: tool.timing.askBeforeTaskSeconds ?? 0,
        onQuestion: 'return',
        // A client that goes away ends the wait; the operation goes on, its task as created.
        signal: request.ctx.mcpReq.signal,
        ...(resume === undefined ? {} : { resume }),
      };
      const offered = resume === undefined ? answersOf(request.ctx.mcpReq.inputResponses ?? {}) : {};
      const step = await runRound(round, deps, offered).catch((error: unknown) => {
        throw resume === undefined ? error : retryEnded(error);
      });
      if (step.kind === 'input-required') return inputRequiredResult(step.record, call, deps);
      if (step.record) return createTaskResult(step.record, deps, view);
    }
    return startTask(request, deps);
  },

  /** A first call (no retry's members) of a tool that asks nothing before its task: it only starts one. */
  plainStart(request: StartRequest, deps: McpDeps): (() => Promise<Record<string, unknown>>) | undefined {
    if ('inputResponses' in request.params || 'requestState' in request.params) return undefined;
    if (asksBeforeTask(request.tool)) return undefined;
    return () => startTask(request, deps);
  },

  register(server: Server, deps: McpDeps, era, ownerId): void {
    // The extension lives on the 2026-07-28 wire; `tasks/result` and `tasks/list` stay unknown there.
    if (era !== 'modern') return;

    const scope = { deps, era, ownerId, errorPrefix: RETRIEVE_PREFIX, missingNoun: 'Task' };
    // "Servers MUST return this error for non-declaring clients issuing tasks/get, tasks/update, and tasks/cancel requests."
    const declared = (method: string, view: RequestView): void => {
      if (!declares(view)) throw missingCapability(method);
    };
    const schemas = TASK_ID_SCHEMAS;

    server.setRequestHandler('tasks/get', schemas, (params, ctx) => serveDialectMethod(scope, ctx, params, (view) => getTask(params.taskId, view, deps)));

    server.setRequestHandler('tasks/update', schemas, (params, ctx) =>
      serveDialectMethod(scope, ctx, params, async (view) => {
        declared('tasks/update', view);
        const { taskId } = params;
        // The SDK lifts `inputResponses` (an MRTR retry field) out of params into the request context.
        const { inputResponses } = ctx.mcpReq;
        if (inputResponses === undefined) throw new ProtocolError(JSONRPC.INVALID_PARAMS, 'Invalid params: inputResponses is required');
        const key = { ownerId: view.ownerId, token: taskId };
        // "Servers SHOULD return a JSON-RPC error if the taskId does not correspond to a known task."
        await readOwnRecord(deps, key, DIALECT, 'Task');
        // "A server SHOULD ignore any inputResponses responses mapped to a key that is not currently
        // outstanding ... MAY accept a partial set of responses": the core resumes each open key
        // once and ignores the rest; the others stay pending.
        const answers = answersOf(inputResponses);
        if (Object.keys(answers).length > 0) await deps.operations.inputs.answer(key, answers);
        return { resultType: 'complete' };
      }),
    );

    server.setRequestHandler('tasks/cancel', schemas, (params, ctx) =>
      serveDialectMethod(scope, ctx, params, async (view) => {
        declared('tasks/cancel', view);
        const { taskId } = params;
        const key = { ownerId: view.ownerId, token: taskId };
        await readOwnRecord(deps, key, DIALECT, 'Task');
        // Stops the execution; a task that already finished is left as it is, and the ack is the same.
        await deps.operations.cancel(key, 'Cancelled by tasks/cancel');
        // "On success, the server MUST acknowledge the request with an empty result."
        return { resultType: 'complete' };
      }),
    );
  },
};
