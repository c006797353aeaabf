/**
 * Which dialect a call uses: the best the server offers for that tool (the Tasks extension,
 * then 2025-11-25 tasks, then SEP-1391), or a plain call for a tool that runs only
 * synchronously. Detection reads `server/discover` (2026-07-28), the initialize
 * capabilities and `tools/list` (`execution.taskSupport`, SEP-1391's `invocationMode`).
 */
import { isObject } from '../lambdas/shared/json-values.ts';
import type { Dialect } from './call-handle.ts';
import type { Era } from './dialects/direct-call.ts';
import { McpRpcError, type McpConnection } from './mcp-connection.ts';

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** Pages of `tools/list` read at most. */
const MAX_TOOL_PAGES = 20;

/** A tool as `tools/list` shows it, with how it may run. */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  /** `async` and `both` run as tasks or operations; `unknown` when the listing says nothing. */
  mode: 'sync' | 'async' | 'both' | 'unknown';
  [key: string]: unknown;
}

export interface DialectChoice {
  dialect: Dialect;
  /** The framing the call's requests use. */
  era: Era;
}

/** Decides how to call `tool`; `forced` names the async dialect to use when the tool can run async. */
export async function chooseDialect(connection: McpConnection, tool: string, forced?: Exclude<Dialect, 'sync'>, signal?: AbortSignal): Promise<DialectChoice> {
  // "The server is the sole decider": with the extension declared, a sync tool just answers.
  if (forced === 'tasks') return { dialect: 'tasks', era: 'modern' };
  if (!forced) {
    const discovered = await connection.discover(signal);
    if (discovered && hasTasksExtension(discovered.capabilities)) return { dialect: 'tasks', era: 'modern' };
  }
  const capabilities = await connection.initialize(signal);
  const legacyTasks = forced === 'tasks-2025-11-25' || (!forced && supportsTaskToolCalls(capabilities));
  // A request that declares SEP-1391 sees `invocationMode`; one that does not sees `execution.taskSupport`.
  const listed = (await listTools(connection, 'legacy', signal, !legacyTasks)).find((t) => t.name === tool);
  if (legacyTasks) {
    const taskSupport = isObject(listed?.execution) ? listed.execution.taskSupport : undefined;
    // "If execution.taskSupport is not present or "forbidden", clients MUST NOT attempt to invoke the tool as a task."
    return { dialect: taskSupport === 'required' || taskSupport === 'optional' ? 'tasks-2025-11-25' : 'sync', era: 'legacy' };
  }
  // SEP-1391: "invocationMode" is "async" for tools that run as operations.
  return { dialect: listed?.invocationMode === 'async' ? 'sep-1391' : 'sync', era: 'legacy' };
}

/** Every tool the server lists to a client that declares long-running support, with its mode. */
export async function listTools(connection: McpConnection, era: Era, signal?: AbortSignal, declareOperations = false): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const params = cursor === undefined ? {} : { cursor };
    const options = { declareOperations, ...(signal ? { signal } : {}) };
    const answer = era === 'modern' ? await connection.modern('tools/list', params, options) : await connection.legacy('tools/list', params, options);
    for (const tool of Array.isArray(answer.tools) ? answer.tools : []) {
      if (isObject(tool) && typeof tool.name === 'string') tools.push({ ...tool, name: tool.name, mode: modeOf(tool) });
    }
    cursor = typeof answer.nextCursor === 'string' ? answer.nextCursor : undefined;
    if (cursor === undefined) break;
  }
  return tools;
}

/**
 * Lists tools with how each runs. The initialize-era listing says so per tool
 * (`execution.taskSupport`, or SEP-1391's `invocationMode`); the 2026-07-28 listing is the
 * fallback for servers that speak only that revision.
 */
export async function discoverTools(connection: McpConnection, signal?: AbortSignal): Promise<ListedTool[]> {
  let capabilities: Record<string, unknown>;
  try {
    capabilities = await connection.initialize(signal);
  } catch (error) {
    if (error instanceof McpRpcError && (await connection.discover(signal))) return listTools(connection, 'modern', signal);
    throw error;
  }
  return listTools(connection, 'legacy', signal, !supportsTaskToolCalls(capabilities));
}

function modeOf(tool: Record<string, unknown>): ListedTool['mode'] {
  const taskSupport = isObject(tool.execution) ? tool.execution.taskSupport : undefined;
  if (taskSupport === 'forbidden') return 'sync';
  if (taskSupport === 'required') return 'async';
  if (taskSupport === 'optional') return 'both';
  if (tool.invocationMode === 'sync' || tool.invocationMode === 'async') return tool.invocationMode;
  return 'unknown';
}

function hasTasksExtension(capabilities: unknown): boolean {
  return isObject(capabilities) && isObject(capabilities.extensions) && TASKS_EXTENSION in capabilities.extensions;
}

/** 2025-11-25: `capabilities.tasks.requests.tools.call` says `tools/call` may be task-augmented. */
function supportsTaskToolCalls(capabilities: Record<string, unknown>): boolean {
  const tasks = capabilities.tasks;
  return isObject(tasks) && isObject(tasks.requests) && isObject(tasks.requests.tools) && isObject(tasks.requests.tools.call);
}
