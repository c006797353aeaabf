/**
 * Call now, join later: start a tool call without blocking, then join, poll or cancel it from
 * this process or any other, through the handle kept in a RequestStateStore.
 */
import { randomUUID } from 'node:crypto';
import { authenticate, type AuthOptions } from './auth.ts';
import { CallFailedError, isTerminal, type CallHandle, type CallStatus, type CallToolResult, type Dialect, type StoredCall } from './call-handle.ts';
import { chooseDialect, discoverTools, type ListedTool } from './dialect-detection.ts';
import { progressOf, type DialectAdapter, type RemoteStatus } from './dialects/dialect-adapter.ts';
import { callDirect } from './dialects/direct-call.ts';
import { sep1391 } from './dialects/sep-1391.ts';
import { tasks20251125 } from './dialects/tasks-2025-11-25.ts';
import { tasksExtension } from './dialects/tasks-extension.ts';
import { McpConnection, McpRpcError, type ClientInfo, type FetchLike } from './mcp-connection.ts';
import { FileRequestStateStore } from './stores/file-request-state-store.ts';
import type { RequestStateStore } from './stores/request-state-store.ts';

const ADAPTERS: Record<Exclude<Dialect, 'sync'>, DialectAdapter> = {
  tasks: tasksExtension,
  'tasks-2025-11-25': tasks20251125,
  'sep-1391': sep1391,
};
/** When a server suggests no poll interval. */
const DEFAULT_POLL_MS = 1000;
/** Never poll faster than this, whatever a server suggests. */
const MIN_POLL_MS = 100;
/** Consecutive failed polls (network, HTTP 429 or 5xx) tolerated before join gives up. */
const MAX_TRANSIENT_FAILURES = 3;

export interface ClientOptions {
  /** @default a FileRequestStateStore in the user's state directory */
  store?: RequestStateStore;
  auth?: AuthOptions;
  fetch?: FetchLike;
  clientInfo?: ClientInfo;
}

export interface StartToolCallOptions extends ClientOptions {
  /** Use this async dialect instead of the best one the server offers. */
  dialect?: Exclude<Dialect, 'sync'>;
  /** How long the server should keep the result (SEP-1391 `keepAlive`, 2025-11-25 `ttl`). */
  keepAliveSeconds?: number;
  signal?: AbortSignal;
  /** Progress of a call that runs synchronously, as the server reports it. */
  onStatus?: (status: CallStatus) => void;
}

export interface JoinOptions extends ClientOptions {
  /** Give up waiting after this long and resolve `undefined`; the call keeps running. @default wait until it ends */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with each new state, status message or progress. */
  onStatus?: (status: CallStatus) => void;
}

function storeOf(options: ClientOptions): RequestStateStore {
  return options.store ?? new FileRequestStateStore();
}

function connectionFor(handle: CallHandle, options: ClientOptions): McpConnection {
  const { fetch } = authenticate(options.auth, options.fetch, handle);
  return new McpConnection(handle.url, {
    fetch,
    ...(options.clientInfo ? { clientInfo: options.clientInfo } : {}),
    ...(handle.sessionId ? { sessionId: handle.sessionId } : {}),
    ...(handle.protocolVersion ? { protocolVersion: handle.protocolVersion } : {}),
  });
}

function toCallStatus(id: string, remote: RemoteStatus): CallStatus {
  const { inline: _inline, ...rest } = remote;
  return { id, ...rest };
}

/**
 * Starts `tool` and returns its handle as soon as the server has accepted the call. A tool
 * that runs only synchronously is called, and its result is stored with the handle.
 */
export async function startToolCall(
  url: string | URL,
  tool: string,
  args: Record<string, unknown> = {},
  options: StartToolCallOptions = {},
): Promise<CallHandle> {
  const store = storeOf(options);
  const { fetch, kind } = authenticate(options.auth, options.fetch, undefined, String(url));
  const connection = new McpConnection(String(url), { fetch, ...(options.clientInfo ? { clientInfo: options.clientInfo } : {}) });
  const signal = options.signal;
  const choice = await chooseDialect(connection, tool, options.dialect, signal);
  const id = randomUUID();
  const progressToken = `progress-${id}`;
  const onNotification = (method: string, params: Record<string, unknown>) => {
    const progress = method === 'notifications/progress' && params.progressToken === progressToken ? progressOf(params) : undefined;
    if (progress) options.onStatus?.({ id, state: 'working', progress, ...(progress.message ? { statusMessage: progress.message } : {}) });
  };
  const startOptions = {
    progressToken,
    onNotification,
    ...(options.keepAliveSeconds === undefined ? {} : { keepAliveSeconds: options.keepAliveSeconds }),
    ...(signal ? { signal } : {}),
  };
  const base = {
    id,
    url: String(url),
    tool,
    createdAt: new Date().toISOString(),
    ...(kind ? { auth: kind } : {}),
  };
  const legacyContext = () => ({
    ...(connection.sessionId ? { sessionId: connection.sessionId } : {}),
    ...(choice.era === 'legacy' ? { protocolVersion: connection.protocolVersion } : {}),
  });
  if (choice.dialect === 'sync') {
    const result = await callDirect(connection, choice.era, tool, args, startOptions);
    const handle: CallHandle = { ...base, dialect: 'sync', ...legacyContext() };
    await store.put({ handle, result, lastStatus: { id, state: 'completed' } });
    return handle;
  }
  const started = await ADAPTERS[choice.dialect].start(connection, tool, args, startOptions);
  if (started.kind === 'sync') {
    // The server chose to answer at once (the Tasks extension lets it).
    const handle: CallHandle = { ...base, dialect: 'sync', ...legacyContext() };
    await store.put({ handle, result: started.result, lastStatus: { id, state: 'completed' } });
    return handle;
  }
  const handle: CallHandle = { ...base, dialect: choice.dialect, remoteId: started.remoteId, ...legacyContext() };
  await store.put({ handle, lastStatus: toCallStatus(id, started.status) });
  return handle;
}

/** A handle, or its id looked up in the store. */
export async function loadHandle(handleOrId: CallHandle | string, options: ClientOptions = {}): Promise<StoredCall> {
  const id = typeof handleOrId === 'string' ? handleOrId : handleOrId.id;
  const stored = await storeOf(options).get(id);
  if (stored) return stored;
  if (typeof handleOrId === 'string') throw new Error(`No call ${id} in the state store`);
  return { handle: handleOrId };
}

/**
 * Waits for the call to end and resolves with its `CallToolResult` (a tool failure is a
 * result with `isError`), or with `undefined` when `timeoutMs` passes first. A protocol
 * failure rejects with `CallFailedError`, a cancelled call with `CallCancelledError`.
 */
export async function join(handleOrId: CallHandle | string, options: JoinOptions = {}): Promise<CallToolResult | undefined> {
  const store = storeOf(options);
  const stored = await loadHandle(handleOrId, options);
  if (stored.result) return stored.result;
  const { handle } = stored;
  if (handle.dialect === 'sync' || !handle.remoteId) throw new CallFailedError(`Call ${handle.id} has no result and nothing to poll`);
  const adapter = ADAPTERS[handle.dialect];
  const connection = connectionFor(handle, options);
  const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
  let reported: string | undefined;
  let failures = 0;
  let lastStatus = stored.lastStatus;
  for (;;) {
    let remote: RemoteStatus | undefined;
    try {
      remote = await adapter.status(connection, handle.remoteId, options.signal);
      failures = 0;
    } catch (error) {
      if (!isTransient(error) || ++failures > MAX_TRANSIENT_FAILURES) throw error;
    }
    if (remote) {
      const status = toCallStatus(handle.id, remote);
      const fingerprint = JSON.stringify([status.state, status.statusMessage, status.progress]);
      if (fingerprint !== reported) {
        reported = fingerprint;
        options.onStatus?.(status);
      }
      lastStatus = status;
      if (isTerminal(remote.state)) {
        const result = await adapter.result(connection, handle.remoteId, remote, options.signal).catch(async (error: unknown) => {
          await store.put({ handle, lastStatus: status });
          throw error;
        });
        await store.put({ handle, lastStatus: status, result });
        return result;
      }
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      await store.put({ handle, ...(lastStatus ? { lastStatus } : {}) });
      return undefined;
    }
    await sleep(Math.min(Math.max(remote?.pollIntervalMs ?? DEFAULT_POLL_MS, MIN_POLL_MS), remaining), options.signal);
  }
}

/** The call's current status, from the server (or the store, once the call has ended). */
export async function status(handleOrId: CallHandle | string, options: ClientOptions & { signal?: AbortSignal } = {}): Promise<CallStatus> {
  const stored = await loadHandle(handleOrId, options);
  const { handle } = stored;
  if (stored.result || handle.dialect === 'sync' || !handle.remoteId)
    return stored.lastStatus ?? { id: handle.id, state: stored.result ? 'completed' : 'unknown' };
  const remote = await ADAPTERS[handle.dialect].status(connectionFor(handle, options), handle.remoteId, options.signal);
  const current = toCallStatus(handle.id, remote);
  await storeOf(options).put({ ...stored, lastStatus: current });
  return current;
}

/** Asks the server to cancel the call and returns its status afterwards. A call that already ended keeps its outcome. */
export async function cancel(handleOrId: CallHandle | string, options: ClientOptions & { signal?: AbortSignal } = {}): Promise<CallStatus> {
  const stored = await loadHandle(handleOrId, options);
  const { handle } = stored;
  if (stored.result || handle.dialect === 'sync' || !handle.remoteId) return status(handle, options);
  await ADAPTERS[handle.dialect].cancel(connectionFor(handle, options), handle.remoteId, options.signal);
  return status(handle, options);
}

/** The calls in the store, newest first, with their last known status. */
export async function list(options: ClientOptions = {}): Promise<StoredCall[]> {
  return storeOf(options).list();
}

/** The server's tools with how each may run. */
export async function listTools(url: string | URL, options: ClientOptions & { signal?: AbortSignal } = {}): Promise<ListedTool[]> {
  const { fetch } = authenticate(options.auth, options.fetch);
  const connection = new McpConnection(String(url), { fetch, ...(options.clientInfo ? { clientInfo: options.clientInfo } : {}) });
  return discoverTools(connection, options.signal);
}

function isTransient(error: unknown): boolean {
  if (error instanceof McpRpcError) return error.httpStatus === 429 || error.httpStatus >= 500;
  // fetch rejects with a TypeError when the server cannot be reached.
  return error instanceof TypeError;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
