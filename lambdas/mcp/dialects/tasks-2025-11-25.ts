/**
 * 2025-11-25 tasks (SEP-1686) for initialize-based clients: `tools/call` with
 * `params.task`, tools marked with `execution.taskSupport`, and `tasks/get`,
 * `tasks/result`, `tasks/list`, `tasks/cancel`. The only file that knows these wire
 * names. Sentences quoted below are from the 2025-11-25 tasks specification.
 *
 * `tasks/result` blocks until the task is terminal, but never longer than the server's
 * blocking bound (`maxBlockingSeconds`, which the Lambda timeout is sized for). A task
 * still running at the bound is answered with -32602 saying it is still working, so
 * the client calls `tasks/result` again or polls `tasks/get`; the task is untouched.
 * While it waits, each question the execution asks goes to the client on its stream, as a
 * server-to-client request with the related-task `_meta`; the client's answer is a new
 * POST that any instance takes (client-responses.ts).
 */
import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { statusMessageFor } from '../../operations/execution-outcome.ts';
import { isTerminal, type OperationKey, type OperationRecord } from '../../operations/operation.ts';
import { OperationError } from '../../operations/operation-error.ts';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import { isObject } from '../../shared/json-values.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import type { RequestView } from '../edge/request-view.ts';
import { PROGRESS_META_KEY, progressOf } from '../calls/run-notifications.ts';
import { ServerRequests } from '../input/server-requests.ts';
import { ANY_RESULT, directOnId, boundedCursor, finalResponse, parseParams, readOwnRecord, serveDialectMethod, withIdFastPath } from './dialect-support.ts';
import { startOperationFor, type AsyncDialect, type CallRequest, type McpDeps, type StartRequest, type ToolListing } from './dialect.ts';

/** The protocol revision whose clients speak this dialect. */
export const REVISION = '2025-11-25';
const DIALECT = 'tasks-2025-11-25';
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const IMMEDIATE_RESPONSE = 'io.modelcontextprotocol/model-immediate-response';
const RETRIEVE_PREFIX = 'Failed to retrieve task';
/** Tasks per `tasks/list` page. */
export const LIST_PAGE_SIZE = 50;
/** Store pages read at most to fill one `tasks/list` page with this dialect's tasks. */
const MAX_STORE_PAGES = 5;

type WireStatus = 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';
type TaskSupport = 'forbidden' | 'optional' | 'required';

const TaskId = z.string({ message: 'taskId must be a string' }).min(1, 'taskId must not be empty');
const TaskIdParams = z.looseObject({ taskId: TaskId });
const TASK_ID_SCHEMAS = { params: withIdFastPath(TaskIdParams, 'taskId'), result: ANY_RESULT };
const ListParams = z.looseObject({ cursor: z.string({ message: 'cursor must be a string' }).optional() });
/** "ttl (number, optional): Requested duration in milliseconds to retain task from creation" */
const TaskParams = z.looseObject({
  ttl: z.number({ message: 'ttl must be a number of milliseconds' }).nonnegative('ttl must not be negative').nullable().optional(),
});

function invalidParams(message: string, data?: unknown): ProtocolError {
  return new ProtocolError(JSONRPC.INVALID_PARAMS, message, data);
}

function speaksRevision(view: RequestView): boolean {
  return view.era === 'legacy' && view.protocolVersion === REVISION;
}

function taskSupportOf(tool: ToolSpec): TaskSupport {
  return tool.invocation === 'sync' ? 'forbidden' : tool.invocation === 'async' ? 'required' : 'optional';
}

/**
 * The Task as this revision words it. "failed: The associated request did not complete
 * successfully. For tool calls specifically, this includes cases where the tool call result
 * has isError set to true."
 */
function toTask(record: OperationRecord, deps: McpDeps): Record<string, unknown> {
  let status: WireStatus;
  let statusMessage = record.statusMessage;
  if (record.status === 'canceled') status = 'cancelled';
  else if (record.status === 'input_required') {
    // "input_required: The receiver needs input from the requestor": not while every question is being answered.
    const open = Object.keys(deps.operations.inputs.pending(record)).length > 0;
    status = open ? 'input_required' : 'working';
    if (!open) statusMessage = statusMessageFor('working');
  } else {
    const response = finalResponse(record, deps);
    if (!response) status = 'working';
    else if ('error' in response) {
      status = 'failed';
      if (record.status !== 'failed') statusMessage = `The operation failed: ${response.error.message}`;
    } else status = response.result.isError === true ? 'failed' : 'completed';
  }
  return {
    taskId: record.token,
    status,
    ...(statusMessage === undefined ? {} : { statusMessage }),
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.updatedAt).toISOString(),
    // "Receivers MUST include the actual ttl duration (or null for unlimited)". The core keeps results
    // keepAlive seconds past completion, so a task is never deleted before createdAt + ttl.
    ttl: record.keepAliveSeconds === null ? null : record.keepAliveSeconds * 1000,
    pollInterval: record.pollIntervalSeconds * 1000,
  };
}

function startedMessage(tool: ToolSpec, record: OperationRecord): string {
  return (
    `Started ${tool.name} as task ${record.token}. It runs in the background: check it with tasks/get ` +
    `every ${record.pollIntervalSeconds} s and fetch the result with tasks/result.`
  );
}

/** "The receiver MUST include the io.modelcontextprotocol/related-task metadata in the request to associate it with the task." */
function relatedTo(params: Record<string, unknown>, taskId: string): Record<string, unknown> {
  const meta = isObject(params._meta) ? params._meta : {};
  return { ...params, _meta: { ...meta, [RELATED_TASK]: { taskId } } };
}

/**
 * Waits until the task is terminal or `boundMs` passes, sending each question the task asks
 * meanwhile on `stream` ("When the requestor encounters the input_required status, it SHOULD
 * preemptively call tasks/result"). It ends with the request (`signal`: the client went away,
 * its stream was cancelled): nothing is left waiting on the task for a response nobody reads.
 */
async function waitAsking(deps: McpDeps, key: OperationKey, boundMs: number, stream: ServerRequests, signal: AbortSignal): Promise<OperationRecord> {
  const deadline = Date.now() + boundMs;
  const unsent = (record: OperationRecord) => stream.hasUnsent(deps.operations.inputs.pending(record));
  for (;;) {
    const record = await deps.operations.waitFor(key, Math.max(0, deadline - Date.now()), unsent, undefined, signal);
    if (isTerminal(record.status) || !unsent(record) || signal.aborted) return record;
    await stream.send(record.token, deps.operations.inputs.pending(record));
  }
}

/** `tasks/get`: the task, and the latest progress the run reported in the result's `_meta` (a Task has no progress field). */
async function getTask(taskId: string, view: RequestView, deps: McpDeps): Promise<Record<string, unknown>> {
  const record = await readOwnRecord(deps, { ownerId: view.ownerId, token: taskId }, DIALECT, 'Task');
  const progress = progressOf(record);
  return { ...toTask(record, deps), ...(progress === undefined ? {} : { _meta: { [PROGRESS_META_KEY]: progress } }) };
}

/** A task-augmented call's checks, made; then its start: a task-augmented `tools/call` never sends anything first. */
function startTask(request: StartRequest, deps: McpDeps): () => Promise<Record<string, unknown>> {
  const { tool } = request;
  // "If execution.taskSupport is not present or "forbidden", ... Servers SHOULD return a -32601 (Method not found) error"
  if (tool.invocation === 'sync') {
    throw new ProtocolError(
      JSONRPC.METHOD_NOT_FOUND,
      `Tool ${tool.name} does not support task augmentation (execution.taskSupport "forbidden"): call it without params.task`,
    );
  }
  const task = parseParams(TaskParams, request.params.task, 'task');
  // "Receivers MAY override the requested ttl duration": milliseconds round up to whole seconds,
  // then the core clamps them to the tool's and the server's bounds.
  const keepAliveSeconds = task.ttl === undefined ? undefined : task.ttl === null ? null : Math.ceil(task.ttl / 1000);
  return async () => {
    // "Task IDs MUST be generated by the receiver when creating a task." The record is readable
    // before this returns. Tasks are cancelled with tasks/cancel, so the core keeps no alias for
    // the request id; passing it lets this call supersede an older one's alias.
    const record = await startOperationFor(request, deps, DIALECT, { keepAliveSeconds });
    return { task: toTask(record, deps), _meta: { [IMMEDIATE_RESPONSE]: startedMessage(tool, record) } };
  };
}

/** The 2025-11-25 tasks dialect: initialize-based (legacy era) clients only. */
export const tasks20251125Dialect: AsyncDialect = {
  name: DIALECT,
  statusMethods: ['tasks/get'],
  // Not tasks/result: it streams open questions before its result.
  answeredAtOnce: ['tasks/get', 'tasks/list', 'tasks/cancel'],
  answeredDirectly: { legacy: { 'tasks/get': directOnId('taskId', getTask) } },

  /** Clients of this revision declare tasks at initialize, which a stateless server never sees. */
  claimsListing(): boolean {
    return false;
  },

  impliedBy: speaksRevision,

  /**
   * A client of this revision whose session shows it declared no `tasks` at initialize
   * ("Present if the client supports task-augmented requests") is a host with no task
   * support: with handle tools on, it is served those. Its task-augmented calls stay ours.
   */
  declinedBy(view: RequestView): boolean {
    return view.initializeCapabilities !== undefined && !isObject(view.initializeCapabilities.tasks);
  },

  /** "tools declare support for tasks via execution.taskSupport" */
  listTool(tool: ToolSpec, base: ToolListing): ToolListing {
    return { ...base, execution: { taskSupport: taskSupportOf(tool) } };
  },

  /** "To create a task, requestors send a request with the task field included in the request params." */
  claimsCall(params: Record<string, unknown>, view: RequestView): boolean {
    return view.era === 'legacy' && params.task !== undefined && params.task !== null;
  },

  /** "If execution.taskSupport is "required", ... Servers MUST return a -32601 (Method not found) error if a client does not attempt to do so." */
  refuseAsyncOnly(tool: ToolSpec, view: RequestView): Error | undefined {
    if (!speaksRevision(view)) return undefined;
    return new ProtocolError(
      JSONRPC.METHOD_NOT_FOUND,
      `Tool ${tool.name} requires task augmentation (execution.taskSupport "required"): call it with params.task`,
    );
  },

  capabilities(era): Record<string, unknown> {
    return era === 'legacy' ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {};
  },

  async call(request: CallRequest, deps: McpDeps): Promise<Record<string, unknown>> {
    return startTask(request, deps)();
  },

  plainStart: startTask,

  register(server: Server, deps: McpDeps, era, ownerId): void {
    // This revision's task methods belong to the initialize-based wire only.
    if (era !== 'legacy') return;

    const scope = { deps, era, ownerId, errorPrefix: RETRIEVE_PREFIX, missingNoun: 'Task' };
    const schemas = TASK_ID_SCHEMAS;

    server.setRequestHandler('tasks/get', schemas, (params, ctx) => serveDialectMethod(scope, ctx, params, (view) => getTask(params.taskId, view, deps)));

    server.setRequestHandler('tasks/result', schemas, (params, ctx) =>
      serveDialectMethod(scope, ctx, params, async (view) => {
        const { taskId } = params;
        const key = { ownerId: view.ownerId, token: taskId };
        await readOwnRecord(deps, key, DIALECT, 'Task');
        // "When a receiver receives a tasks/result request for a task in any other non-terminal status
        // (working or input_required), it MUST block the response until the task reaches a terminal status."
        const boundSeconds = deps.operations.limits.maxBlockingSeconds;
        const stream = new ServerRequests(server, ctx.mcpReq.id, (p) => relatedTo(p, taskId));
        const record = await waitAsking(deps, key, boundSeconds * 1000, stream, ctx.mcpReq.signal);
        if (!isTerminal(record.status)) {
          const { status } = toTask(record, deps);
          throw new OperationError(
            'NOT_READY',
            `Task is still ${String(status)} after ${boundSeconds} s: call tasks/result again, or poll tasks/get until it is terminal`,
            { data: { taskId, status } },
          );
        }
        if (record.status === 'canceled') throw new OperationError('CANCELED', 'Task was cancelled');
        const response = finalResponse(record, deps);
        if (!response) throw new OperationError('INTERNAL', 'The task ended without an outcome');
        // "If the underlying request resulted in a JSON-RPC error, tasks/result MUST return that same JSON-RPC error."
        if ('error' in response) throw new ProtocolError(response.error.code, response.error.message, response.error.data);
        // "The tasks/result operation MUST include this metadata in its response"
        const meta = { ...(response.result._meta as Record<string, unknown> | undefined), [RELATED_TASK]: { taskId } };
        return { ...response.result, _meta: meta };
      }),
    );

    server.setRequestHandler('tasks/list', { params: ListParams, result: ANY_RESULT }, (params, ctx) =>
      serveDialectMethod(scope, ctx, params, async (view) => {
        const cursor = boundedCursor(parseParams(ListParams, params, 'params').cursor);
        // "For tasks/list requests, receivers MUST ensure the returned task list includes only tasks
        // associated with the requestor's authorization context": an owner-scoped index query, newest first.
        // Other dialects' operations are not tasks here, so pages skip past them.
        const tasks: Record<string, unknown>[] = [];
        let next = cursor;
        for (let pages = 0; pages < MAX_STORE_PAGES && tasks.length === 0; pages++) {
          const page = await deps.operations.list(view.ownerId, { limit: LIST_PAGE_SIZE, ...(next === undefined ? {} : { cursor: next }) });
          tasks.push(...page.items.filter((r) => r.dialect === DIALECT).map((r) => toTask(r, deps)));
          next = page.nextCursor;
          if (next === undefined) break;
        }
        // "Receivers MUST include a nextCursor in the response if more tasks are available."
        return { tasks, ...(next === undefined ? {} : { nextCursor: next }) };
      }),
    );

    server.setRequestHandler('tasks/cancel', schemas, (params, ctx) =>
      serveDialectMethod(scope, ctx, params, async (view) => {
        const { taskId } = params;
        const key = { ownerId: view.ownerId, token: taskId };
        const before = await readOwnRecord(deps, key, DIALECT, 'Task');
        const cancelled = isTerminal(before.status) ? before : await deps.operations.cancel(key, 'Cancelled by tasks/cancel');
        // "Receivers MUST reject cancellation requests for tasks already in a terminal status ... with error code -32602"
        // (also when the task finished while the cancel was under way).
        if (before !== cancelled && cancelled.status === 'canceled') return toTask(cancelled, deps);
        const status = toTask(cancelled, deps).status;
        throw invalidParams(`Cannot cancel task: already in terminal status '${status}'`);
      }),
    );
  },
};
