/**
 * `subscriptions/listen` (2026-07-28, the subscriptions pattern) with the Tasks
 * extension's `notifications.taskIds`: checks the request, agrees to the caller's own
 * tasks, and hands them to a stream that reports each task the way `tasks/get` reads it.
 * The SDK would answer every listen itself with an empty acknowledgement; requests this
 * handler does not take (another revision, headers that do not match) go on to the SDK,
 * which answers them as it answers any request.
 */
import * as z from 'zod';
import type { ListenLeases } from '../../operations/listen-leases.ts';
import type { StatusSignal } from '../../operations/status-signal.ts';
import { isObject } from '../../shared/json-values.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import {
  declaresTasksExtension,
  readListenedTask,
  TASK_NOTIFICATION,
  taskNotificationsNeedExtension,
  type ListenedTask,
} from '../dialects/tasks-2026-07-28.ts';
import { MAX_TOKEN_LENGTH } from '../dialects/dialect-support.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import { invocationDeadline } from './listen-deadline.ts';
import { listenStream } from './listen-stream.ts';

const METHOD = 'subscriptions/listen';
const MODERN_VERSION = '2026-07-28';

/** What a deployment may tune; every field has a default. */
export interface ListenOptions {
  /** `false` answers `subscriptions/listen` with -32601 (`ASYNC_MCP_LISTEN=0`). @default true */
  enabled?: boolean;
  /** Task ids one stream may ask for. @default 100 */
  maxTaskIds?: number;
  /** Streams one principal may have open at once. @default 10 */
  maxStreamsPerPrincipal?: number;
  /** How often a stream reads its tasks. @default the smallest pollIntervalMs of the tasks it watches */
  pollIntervalMs?: number;
  /** The longest one stream stays open; the invocation's deadline may end it sooner. @default 840000 (14 min) */
  maxStreamMs?: number;
  /** A stream ends this long before the invocation's deadline. @default 5000 */
  deadlineMarginMs?: number;
  /** An SSE comment this often keeps idle connections open. @default 15000 */
  keepAliveMs?: number;
  /** Wakes open streams when a status is written in this process (the local stack); AWS has none. */
  wake?: StatusSignal;
}

export const LISTEN_DEFAULTS = {
  maxTaskIds: 100,
  maxStreamsPerPrincipal: 10,
  maxStreamMs: 14 * 60_000,
  deadlineMarginMs: 5_000,
  keepAliveMs: 15_000,
} as const;

/** The shortest read interval a stream uses, whatever its tasks ask. */
const MIN_POLL_INTERVAL_MS = 200;

/** Serves a listen request, or `undefined` when the request is not one this handler takes. */
export type ListenHandler = (request: Request, body: unknown, ownerId: string) => Promise<Response | undefined>;

/** Whether a parsed body is a `subscriptions/listen` request. */
export function isListenRequest(body: unknown): boolean {
  return isObject(body) && body.method === METHOD && 'id' in body;
}

export function createListenHandler(deps: McpDeps, leases: ListenLeases, options: ListenOptions = {}): ListenHandler {
  const settings = { ...LISTEN_DEFAULTS, ...definedOf(options) };
  const TaskId = z.string({ message: 'must be a string' }).min(1, 'must not be empty');
  const Params = z.looseObject({
    notifications: z.looseObject(
      {
        taskIds: z
          .array(TaskId, { message: 'must be an array of task ids' })
          .max(settings.maxTaskIds, `must name at most ${settings.maxTaskIds} task ids`)
          .optional(),
        toolsListChanged: z.boolean({ message: 'must be a boolean' }).optional(),
      },
      { message: 'is required and must be an object' },
    ),
  });

  return async (request, body, ownerId) => {
    if (!isListenRequest(body) || !isObject(body)) return undefined;
    const params = isObject(body.params) ? body.params : {};
    const meta = isObject(params._meta) ? params._meta : {};
    // Only a well-formed 2026-07-28 request is ours; the SDK rejects the rest with its own errors.
    if (meta['io.modelcontextprotocol/protocolVersion'] !== MODERN_VERSION) return undefined;
    if (request.headers.get('mcp-protocol-version') !== MODERN_VERSION || request.headers.get('mcp-method') !== METHOD) return undefined;
    const id = body.id as string | number;
    if (options.enabled === false) return jsonRpcError(id, 404, JSONRPC.METHOD_NOT_FOUND, `Method not found: ${METHOD} is turned off on this server`);

    const parsed = Params.safeParse(params);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = ['params', ...(issue?.path ?? [])].join('.');
      return jsonRpcError(id, 200, JSONRPC.INVALID_PARAMS, `Invalid ${field}: ${issue?.message ?? 'not a valid filter'}`, { field });
    }
    const { taskIds } = parsed.data.notifications;
    // The server declares no tools.listChanged: its catalog is fixed for the life of a process,
    // so `toolsListChanged` and every other filter field are left out of the acknowledgement.
    if (taskIds === undefined) return listenStream(emptyPlan(id, {}, deps));
    if (!declaresTasksExtension(meta['io.modelcontextprotocol/clientCapabilities'])) {
      const error = taskNotificationsNeedExtension();
      return jsonRpcError(id, 400, error.code, error.message, error.data);
    }

    // "only the caller's own tasks": another principal's id reads as unknown, and is left out the same way.
    const unique = [...new Set(taskIds)].filter((taskId) => taskId.length <= MAX_TOKEN_LENGTH);
    const read = (taskId: string) => readListenedTask(deps, ownerId, taskId);
    let found: Array<{ id: string; task: ListenedTask | undefined }>;
    try {
      found = await Promise.all(unique.map(async (taskId) => ({ id: taskId, task: await read(taskId) })));
    } catch (error) {
      deps.logger.error('listen: tasks not read', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      return jsonRpcError(id, 500, JSONRPC.INTERNAL_ERROR, 'Internal error: the server could not read the tasks');
    }
    const agreed = found.flatMap(({ id: taskId, task }) => (task ? [{ id: taskId, task }] : []));
    const acknowledged = { taskIds: agreed.map((entry) => entry.id) };
    const initial = agreed.map(({ id: taskId, task }) => ({ id: taskId, state: { params: task.params, change: task.change, terminal: task.terminal } }));
    const watching = agreed.filter((entry) => !entry.task.terminal);
    if (watching.length === 0) return listenStream({ ...emptyPlan(id, acknowledged, deps), initial });

    const now = Date.now();
    const deadline = invocationDeadline();
    const endAtMs = Math.min(now + settings.maxStreamMs, deadline === undefined ? Infinity : deadline - settings.deadlineMarginMs);
    const lease = await leases.acquire(ownerId, endAtMs);
    if (!lease) {
      return jsonRpcError(
        id,
        429,
        JSONRPC.TOO_MANY_ACTIVE_OPERATIONS,
        `Too many open ${METHOD} streams: at most ${leases.limit} per principal; close one, or listen for more task ids on one stream`,
        { limit: leases.limit },
        { 'retry-after': '5' },
      );
    }
    const pollIntervalMs = Math.max(MIN_POLL_INTERVAL_MS, settings.pollIntervalMs ?? Math.min(...watching.map((entry) => entry.task.pollIntervalMs)));
    return listenStream({
      subscriptionId: id,
      acknowledged,
      method: TASK_NOTIFICATION,
      initial,
      read: async (taskId) => {
        const task = await read(taskId);
        return task && { params: task.params, change: task.change, terminal: task.terminal };
      },
      endAtMs,
      pollIntervalMs,
      keepAliveMs: settings.keepAliveMs,
      ...(options.wake ? { wake: options.wake } : {}),
      signal: request.signal,
      onEnd: () => leases.release(lease),
      logger: deps.logger,
    });
  };
}

/** A stream with nothing to watch: the acknowledgement (and any final tasks), then its graceful end. */
function emptyPlan(subscriptionId: string | number, acknowledged: Record<string, unknown>, deps: McpDeps) {
  return {
    subscriptionId,
    acknowledged,
    method: TASK_NOTIFICATION,
    initial: [],
    read: async () => undefined,
    endAtMs: 0,
    pollIntervalMs: MIN_POLL_INTERVAL_MS,
    keepAliveMs: LISTEN_DEFAULTS.keepAliveMs,
    onEnd: async () => undefined,
    logger: deps.logger,
  };
}

function jsonRpcError(id: string | number, status: number, code: number, message: string, data?: unknown, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } }, { status, headers });
}

function definedOf<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
