/**
 * Call now, join later: start a tool call without blocking, then join, poll or cancel it from
 * this process or any other, through the handle kept in a RequestStateStore. A call whose
 * caller can answer declares elicitation, and its questions are answered by a handler while
 * joining, or one by one with `answer`, from any process that holds the handle.
 */
import { randomUUID } from 'node:crypto';
import { authenticate, type AuthOptions } from './auth.ts';
import {
  CallFailedError,
  isTerminal,
  type CallHandle,
  type CallStatus,
  type CallToolResult,
  type Dialect,
  type QuestionHandler,
  type StoredCall,
} from './call-handle.ts';
import { chooseDialect, discoverTools, type ListedTool } from './dialect-detection.ts';
import { askedIn, progressOf, type AskedQuestion, type DialectAdapter, type RemoteStatus } from './dialects/dialect-adapter.ts';
import { callDirect } from './dialects/direct-call.ts';
import { sep1391 } from './dialects/sep-1391.ts';
import { tasks20251125 } from './dialects/tasks-2025-11-25.ts';
import { tasksExtension } from './dialects/tasks-extension.ts';
import { McpConnection, McpRpcError, type ClientInfo, type FetchLike, type ServerRequest } from './mcp-connection.ts';
import { checkAnswer, type Answer, type Question } from './questions.ts';
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
  /**
   * Answers the questions the call asks while it is being started (a call that runs
   * synchronously); pass it to `join` too for the questions asked later. Giving it declares
   * the elicitation capability (form mode).
   */
  onQuestion?: QuestionHandler;
  /**
   * Declare the elicitation capability (form mode) without a handler: the call will be
   * answered later, by id, from this or another process (`answer`, or `join` with `onQuestion`).
   * @default false, unless `onQuestion` is given; a call that declares nothing is never asked
   */
  canAnswer?: boolean;
}

export interface JoinOptions extends ClientOptions {
  /** Give up waiting after this long and resolve `undefined`; the call keeps running. @default wait until it ends */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with each new state, status message or progress. */
  onStatus?: (status: CallStatus) => void;
  /**
   * Answers each open question while the call is `input_required`; each answer is checked
   * with `checkAnswer` before it is sent. Without it, join keeps polling while questions wait.
   */
  onQuestion?: QuestionHandler;
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
    ...(handle.canAnswer ? { canAnswer: true } : {}),
  });
}

function toCallStatus(id: string, remote: RemoteStatus): CallStatus {
  const { inline: _inline, questions, ...rest } = remote;
  return { id, ...rest, ...(questions ? { questions: questions.map((q) => q.question) } : {}) };
}

/**
 * The status to keep with a final result. Every dialect's tool failure reads `failed` here,
 * as `join` reports it, though the Tasks extension and SEP-1391 call it `completed`.
 */
function settled(status: CallStatus, result: CallToolResult): CallStatus {
  return result.isError === true && status.state === 'completed' ? { ...status, state: 'failed' } : status;
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
  const canAnswer = options.canAnswer === true || options.onQuestion !== undefined;
  const connection = new McpConnection(String(url), {
    fetch,
    ...(options.clientInfo ? { clientInfo: options.clientInfo } : {}),
    ...(canAnswer ? { canAnswer: true } : {}),
  });
  const signal = options.signal;
  const choice = await chooseDialect(connection, tool, options.dialect, signal);
  const id = randomUUID();
  const progressToken = `progress-${id}`;
  const onNotification = (method: string, params: Record<string, unknown>) => {
    const progress = method === 'notifications/progress' && params.progressToken === progressToken ? progressOf(params) : undefined;
    if (progress) options.onStatus?.({ id, state: 'working', progress, ...(progress.message ? { statusMessage: progress.message } : {}) });
  };
  const base = {
    id,
    url: String(url),
    tool,
    createdAt: new Date().toISOString(),
    ...(kind ? { auth: kind } : {}),
    ...(canAnswer ? { canAnswer: true } : {}),
  };
  // Questions asked before the call returns: a synchronous call's (on its stream, or in 2026-07-28 rounds).
  const { onQuestion } = options;
  const answerQuestion = async (asked: AskedQuestion): Promise<Answer> => {
    if (!onQuestion) throw new Error('The call asked a question before it returned, and nothing here answers it: pass onQuestion');
    const reply = await onQuestion(asked.question, { handle: { ...base, dialect: 'sync' }, ...(signal ? { signal } : {}) });
    checkAnswer(asked.question, reply);
    return reply;
  };
  // On an initialize-era stream, each answer is a POST of its own while the call waits. A
  // question left unanswered (the handler failed, or its answer did not fit) stops the call
  // at once rather than leaving it to wait out its bound.
  const answering: Array<Promise<void>> = [];
  let answerFailure: unknown;
  const stop = new AbortController();
  const callRequestId = `call-${id}`;
  const onRequest = (request: ServerRequest) => {
    const [asked] = askedIn([request]);
    if (!onQuestion || !asked) return;
    const answered = answerQuestion(asked).then((reply) => connection.respond(request.id, { ...reply }, signal));
    answering.push(
      answered.catch(async (error: unknown) => {
        answerFailure ??= error;
        stop.abort(error);
        await connection
          .notify('notifications/cancelled', { requestId: callRequestId, reason: 'The client could not answer its question' })
          .catch(() => undefined);
      }),
    );
  };
  const startOptions = {
    progressToken,
    onNotification,
    onRequest,
    answerQuestion,
    ...(options.keepAliveSeconds === undefined ? {} : { keepAliveSeconds: options.keepAliveSeconds }),
    ...(signal ? { signal } : {}),
  };
  const legacyContext = () => ({
    ...(connection.sessionId ? { sessionId: connection.sessionId } : {}),
    ...(choice.era === 'legacy' ? { protocolVersion: connection.protocolVersion } : {}),
  });
  if (choice.dialect === 'sync') {
    const callSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    const called = callDirect(connection, choice.era, tool, args, { ...startOptions, id: callRequestId, signal: callSignal });
    const result = await called.catch(async (error: unknown) => {
      await Promise.all(answering);
      throw answerFailure ?? error;
    });
    await Promise.all(answering);
    if (answerFailure !== undefined) throw answerFailure;
    const handle: CallHandle = { ...base, dialect: 'sync', ...legacyContext() };
    await store.put({ handle, result, lastStatus: settled({ id, state: 'completed' }, result) });
    return handle;
  }
  const started = await ADAPTERS[choice.dialect].start(connection, tool, args, startOptions);
  if (started.kind === 'sync') {
    // The server chose to answer at once (the Tasks extension lets it).
    const handle: CallHandle = { ...base, dialect: 'sync', ...legacyContext() };
    await store.put({ handle, result: started.result, lastStatus: settled({ id, state: 'completed' }, started.result) });
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
  const { remoteId } = handle;
  if (handle.dialect === 'sync' || !remoteId) throw new CallFailedError(`Call ${handle.id} has no result and nothing to poll`);
  const adapter = ADAPTERS[handle.dialect];
  const connection = connectionFor(handle, options);
  const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
  let reported: string | undefined;
  let failures = 0;
  let lastStatus = stored.lastStatus;
  // The questions this join answered while the call stays input_required: none is answered twice.
  const answered = new Set<string>();
  for (;;) {
    let remote: RemoteStatus | undefined;
    try {
      remote = await adapter.status(connection, remoteId, options.signal);
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
        const result = await adapter.result(connection, remoteId, remote, options.signal).catch(async (error: unknown) => {
          await store.put({ handle, lastStatus: status });
          throw error;
        });
        await store.put({ handle, lastStatus: settled(status, result), result });
        return result;
      }
      if (remote.state !== 'input_required') answered.clear();
      else if (options.onQuestion) {
        const open = (await adapter.questions(connection, remoteId, options.signal, remote)).filter((a) => !answered.has(a.question.key));
        for (const asked of open) {
          answered.add(asked.question.key);
          await answerWith(options.onQuestion, asked, handle, options.signal, (answer) => adapter.answer(connection, remoteId, asked, answer, options.signal));
        }
        // Answered: look again at once rather than after a poll interval.
        if (open.length > 0) continue;
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
  const adapter = ADAPTERS[handle.dialect];
  const connection = connectionFor(handle, options);
  const remote = await adapter.status(connection, handle.remoteId, options.signal);
  if (remote.state === 'input_required' && !remote.questions) remote.questions = await adapter.questions(connection, handle.remoteId, options.signal, remote);
  const current = toCallStatus(handle.id, remote);
  await storeOf(options).put({ ...stored, lastStatus: current });
  return current;
}

/** The call's open questions now (empty when none is open). */
export async function questions(handleOrId: CallHandle | string, options: ClientOptions & { signal?: AbortSignal } = {}): Promise<Question[]> {
  const stored = await loadHandle(handleOrId, options);
  const { handle } = stored;
  if (stored.result || handle.dialect === 'sync' || !handle.remoteId) return [];
  const asked = await ADAPTERS[handle.dialect].questions(connectionFor(handle, options), handle.remoteId, options.signal);
  return asked.map((a) => a.question);
}

/**
 * Answers the open question with `key` (without a key: the only open question, or the first),
 * after checking the answer against its requested schema (`InvalidAnswerError`, nothing
 * sent). Throws when no question is open or `key` is not an open question's. Returns the
 * call's status afterwards.
 */
export async function answer(
  handleOrId: CallHandle | string,
  reply: Answer,
  options: ClientOptions & { key?: string; signal?: AbortSignal } = {},
): Promise<CallStatus> {
  const stored = await loadHandle(handleOrId, options);
  const { handle } = stored;
  if (stored.result || handle.dialect === 'sync' || !handle.remoteId) throw new Error(`Call ${handle.id} has ended: it has no open question`);
  const adapter = ADAPTERS[handle.dialect];
  const connection = connectionFor(handle, options);
  const open = await adapter.questions(connection, handle.remoteId, options.signal);
  if (open.length === 0) throw new Error(`Call ${handle.id} has no open question`);
  const asked = options.key === undefined ? open[0] : open.find((a) => a.question.key === options.key);
  if (!asked) throw new Error(`Call ${handle.id} has no open question "${options.key}" (open: ${open.map((a) => JSON.stringify(a.question.key)).join(', ')})`);
  checkAnswer(asked.question, reply);
  await adapter.answer(connection, handle.remoteId, asked, reply, options.signal);
  return status(handle, options);
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

/** Asks `handler`, checks its answer against the question's schema, then sends it. */
async function answerWith(
  handler: QuestionHandler,
  asked: AskedQuestion,
  handle: CallHandle,
  signal: AbortSignal | undefined,
  send: (answer: Answer) => Promise<void>,
): Promise<void> {
  const reply = await handler(asked.question, { handle, ...(signal ? { signal } : {}) });
  checkAnswer(asked.question, reply);
  await send(reply);
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
