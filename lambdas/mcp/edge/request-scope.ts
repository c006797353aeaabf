/**
 * Per-HTTP-request state that MCP handlers cannot reach through the SDK:
 * - work that must finish before the response is sent. The SDK acknowledges a
 *   notification (202) without waiting for its handler, but a Lambda is frozen once it
 *   has answered, so a cancel started by `notifications/cancelled` would never run;
 * - an HTTP status (and headers, such as `Retry-After`) the spec asks for where the SDK answers 200;
 * - the client capabilities an initialize-era session id carries (see legacy-session.ts);
 * - reads made once per request: a record the edge read to choose how to answer is the one
 *   the handler serves.
 */
import { contextSlot } from '../../shared/context-slot.ts';
import { isObject, parseJsonOrText } from '../../shared/json-values.ts';

interface RequestScope {
  pending: Promise<unknown>[];
  status?: number;
  headers: Record<string, string>;
  sessionCapabilities?: Record<string, unknown>;
  once?: Map<string, Promise<unknown>>;
}

const scope = contextSlot<RequestScope>('request scope');

export interface RequestScopeOptions {
  /**
   * The body is a JSON-RPC batch: one message's error must not turn the whole
   * response into an HTTP error, so status and header overrides are ignored.
   */
  batch?: boolean;
  /** What the client declared at `initialize`, read back from a verified session id. */
  sessionCapabilities?: Record<string, unknown>;
  /**
   * Whether the request can end in an HTTP status of its own (only a `tools/call` can: a
   * start past the active-operation limit is 429). When it cannot, an SSE answer is relayed
   * as it comes, without holding its headers for the first message.
   * @default true
   */
  mayOverrideStatus?: boolean;
  /**
   * Whether the body may hold a notification, whose handler registers its work only after the
   * SDK has answered. Without one there is nothing to wait a turn of the event loop for.
   * @default true
   */
  mayHoldNotification?: boolean;
}

/** Runs `serve`, waits for the work registered while it ran, and applies a status override. */
export async function withRequestScope(serve: () => Promise<Response>, options: RequestScopeOptions = {}): Promise<Response> {
  const state: RequestScope = { pending: [], headers: {}, ...(options.sessionCapabilities ? { sessionCapabilities: options.sessionCapabilities } : {}) };
  let response = await scope.run(state, serve);
  if (!options.batch && options.mayOverrideStatus !== false && response.status === 200 && isEventStream(response.headers) && response.body) {
    // The legacy transport answers with an SSE stream before the handler has run, so the status
    // is only known once the JSON-RPC response is on the stream: hold the headers until the
    // first message.
    const { seen, body } = await readUntilResponse(response.body);
    if (state.status !== undefined && state.status >= 400 && seen !== undefined) {
      await body.cancel().catch(() => undefined);
      // An HTTP error travels as a plain JSON body, which every HTTP client reads.
      const headers = new Headers({ 'content-type': 'application/json', ...state.headers });
      return new Response(seen, { status: state.status, headers });
    }
    response = new Response(body, { status: response.status, headers: response.headers });
  }
  // Notification handlers run in a later microtask than the SDK's 202: let them register their work.
  if (options.mayHoldNotification !== false) await new Promise<void>((resolve) => setImmediate(resolve));
  while (state.pending.length) await Promise.allSettled(state.pending.splice(0));
  if (options.batch || response.status !== 200) return response;
  const extraHeaders = Object.entries(state.headers);
  if (state.status === undefined && extraHeaders.length === 0) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of extraHeaders) headers.set(name, value);
  return new Response(response.body, { status: state.status ?? response.status, statusText: '', headers });
}

/** Registers `work` with the current request, or lets it run free outside one. */
export function finishBeforeResponse(work: Promise<unknown>): void {
  scope.getStore()?.pending.push(work);
}

/** Adds a header to the current response (e.g. `Retry-After` with a 429). */
export function setHttpHeader(name: string, value: string): void {
  const state = scope.getStore();
  if (state) state.headers[name] = value;
}

/** The capabilities the request's verified session id carries; `undefined` without one. */
export function sessionCapabilities(): Record<string, unknown> | undefined {
  return scope.getStore()?.sessionCapabilities;
}

/**
 * What `read` gives for `key`, read once per request: a second call in the same request gets
 * the first call's promise (settled or not, rejected too). Outside a request it reads each time.
 */
export function readOncePerRequest<T>(key: string, read: () => Promise<T>): Promise<T> {
  const state = scope.getStore();
  if (!state) return read();
  state.once ??= new Map();
  let reading = state.once.get(key) as Promise<T> | undefined;
  if (reading === undefined) {
    reading = read();
    state.once.set(key, reading);
  }
  return reading;
}

/** Asks for another HTTP status than the SDK's 200 for the current response. */
export function setHttpStatus(status: number): void {
  const state = scope.getStore();
  if (state) state.status = status;
}

function isEventStream(headers: Headers): boolean {
  return (headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}

/**
 * Reads an SSE body up to its first JSON-RPC message (or its end). Returns that message's
 * JSON text when it is a response, and a stream that replays everything read, then the rest.
 * A server request or notification first releases the stream as it is: nothing is held
 * back that a client may have to answer.
 */
async function readUntilResponse(stream: ReadableStream<Uint8Array>): Promise<{ seen?: string; body: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const chunks: Uint8Array[] = [];
  let text = '';
  let first: { data: string; isResponse: boolean } | undefined;
  let done = false;
  while (first === undefined && !done) {
    const next = await reader.read();
    done = next.done;
    if (next.value) {
      chunks.push(next.value);
      text += decoder.decode(next.value, { stream: true });
      first = firstMessageIn(text);
    }
  }
  const body = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      const chunk = chunks.shift();
      if (chunk) return controller.enqueue(chunk);
      const next = done ? { done: true as const, value: undefined } : await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { ...(first?.isResponse ? { seen: first.data } : {}), body };
}

/** The first complete SSE event that holds a JSON-RPC message, and whether it is a response. */
function firstMessageIn(sse: string): { data: string; isResponse: boolean } | undefined {
  const events = sse.split(/\r?\n\r?\n/);
  events.pop(); // The last piece may be an event still arriving.
  for (const event of events) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (!data) continue; // A priming or keep-alive event.
    const message = parseJsonOrText(data);
    if (!isObject(message)) continue;
    return { data, isResponse: 'id' in message && ('result' in message || 'error' in message) };
  }
  return undefined;
}
