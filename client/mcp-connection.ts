/**
 * JSON-RPC over Streamable HTTP, one POST per request, in either framing: the 2026-07-28
 * per-request envelope (with `Mcp-Method` / `Mcp-Name` headers) or the initialize-based
 * revisions (with `Mcp-Session-Id` when the server keeps sessions). Every follow-up of a
 * call is a single stateless POST, so a fresh process can join without a handshake, and
 * each request can be signed on its own (SigV4 signs the body).
 */
import { isObject } from '../lambdas/shared/json-values.ts';

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2025-11-25';
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** A `fetch` as the connection uses it (auth wrappers have this shape). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientInfo {
  name: string;
  version: string;
}

/** A JSON-RPC error answer (or an HTTP failure with none), with the HTTP status it came with. */
export class McpRpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  readonly httpStatus: number;
  /**
   * AWS itself refused the request (a Lambda Function URL's 403 AccessDeniedException,
   * `{"Message":"Forbidden"}`): under AWS_IAM that is an unsigned request, or a signature or
   * principal it does not accept. The server never saw it.
   */
  readonly awsAccessDenied: boolean;
  constructor(code: number, message: string, data: unknown, httpStatus: number, awsAccessDenied = false) {
    super(message);
    this.name = 'McpRpcError';
    this.code = code;
    this.data = data;
    this.httpStatus = httpStatus;
    this.awsAccessDenied = awsAccessDenied;
  }
}

/** A Function URL's own refusal: AWS's error type header, or its body, since proxies may drop headers. */
async function isAwsAccessDenied(response: Response): Promise<boolean> {
  if (response.status !== 403) return false;
  if (response.headers.get('x-amzn-errortype')?.startsWith('AccessDeniedException')) return true;
  const body = await response
    .clone()
    .text()
    .catch(() => '');
  return body.trim() === '{"Message":"Forbidden"}';
}

/** Server-to-client notifications that arrive on a request's SSE stream (progress, logging). */
export type NotificationListener = (method: string, params: Record<string, unknown>) => void;

/** A server-to-client request that arrived on a request's SSE stream (a question, for instance). */
export interface ServerRequest {
  id: string | number;
  method: string;
  params: Record<string, unknown>;
}

export type RequestListener = (request: ServerRequest) => void;

/** The elicitation capability in form mode, the only mode this client answers. */
const ELICITATION = { elicitation: { form: {} } };

export interface RequestOptions {
  id?: string | number;
  /** Declare SEP-1391's `longRunningOperations` in this request's `_meta` (initialize era). */
  declareOperations?: boolean;
  signal?: AbortSignal;
  onNotification?: NotificationListener;
  /** Server-to-client requests on the answer's stream; the caller answers them with `respond`. */
  onRequest?: RequestListener;
}

export interface ConnectionOptions {
  fetch?: FetchLike;
  clientInfo?: ClientInfo;
  /** Resume a stateful server's session (from a handle). */
  sessionId?: string;
  /** The negotiated initialize-era revision (from a handle). */
  protocolVersion?: string;
  /** Declare elicitation (form mode): the caller answers the questions a call asks. */
  canAnswer?: boolean;
}

let sequence = 0;

export class McpConnection {
  readonly url: string;
  sessionId: string | undefined;
  protocolVersion: string;
  readonly canAnswer: boolean;
  private readonly fetchImpl: FetchLike;
  private readonly clientInfo: ClientInfo;

  constructor(url: string, options: ConnectionOptions = {}) {
    this.url = url;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.clientInfo = options.clientInfo ?? { name: 'async-mcp-client', version: '0.1.0' };
    this.sessionId = options.sessionId;
    this.protocolVersion = options.protocolVersion ?? LEGACY_VERSION;
    this.canAnswer = options.canAnswer === true;
  }

  /** What this connection declares it can answer, beside whatever a dialect declares. */
  private answering(): Record<string, unknown> {
    return this.canAnswer ? ELICITATION : {};
  }

  /** `server/discover` (2026-07-28); `undefined` when the server does not speak that revision. */
  async discover(signal?: AbortSignal): Promise<Record<string, unknown> | undefined> {
    try {
      return await this.modern('server/discover', {}, { ...(signal ? { signal } : {}) });
    } catch (error) {
      if (error instanceof McpRpcError) return undefined;
      throw error;
    }
  }

  /** A 2026-07-28 request declaring the Tasks extension in its envelope. */
  modern(method: string, params: Record<string, unknown>, options: RequestOptions = {}): Promise<Record<string, unknown>> {
    const meta = {
      ...(isObject(params._meta) ? params._meta : {}),
      'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
      'io.modelcontextprotocol/clientInfo': this.clientInfo,
      [CLIENT_CAPABILITIES_KEY]: { extensions: { [TASKS_EXTENSION]: {} }, ...this.answering() },
    };
    const name = [params.name, params.uri, params.taskId].find((v): v is string => typeof v === 'string');
    const headers: Record<string, string> = {
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    };
    return this.post(method, { ...params, _meta: meta }, headers, options);
  }

  /**
   * An initialize-era request. SEP-1391's capability rides in `_meta` when asked for, as its
   * version negotiation allows per request, so a stateless server sees it without a session.
   */
  legacy(method: string, params: Record<string, unknown>, options: RequestOptions = {}): Promise<Record<string, unknown>> {
    if (!options.declareOperations) return this.post(method, params, this.legacyHeaders(), options);
    const meta = {
      ...(isObject(params._meta) ? params._meta : {}),
      [CLIENT_CAPABILITIES_KEY]: { experimental: { longRunningOperations: {} }, ...this.answering() },
    };
    return this.post(method, { ...params, _meta: meta }, this.legacyHeaders(), options);
  }

  /** A JSON-RPC notification in the initialize-era framing. */
  async notify(method: string, params: Record<string, unknown>): Promise<void> {
    const response = await this.fetchImpl(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...this.legacyHeaders() },
      body: JSON.stringify({ jsonrpc: '2.0', method, params }),
    });
    await response.body?.cancel();
    if (!response.ok) throw new McpRpcError(-32603, `${method}: HTTP ${response.status}`, undefined, response.status);
  }

  /**
   * Answers a server-to-client request (initialize-era framing): a JSON-RPC response POSTed on
   * its own, which the server takes with HTTP 202 and no body.
   */
  async respond(id: string | number, result: Record<string, unknown>, signal?: AbortSignal): Promise<void> {
    const response = await this.fetchImpl(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...this.legacyHeaders() },
      body: JSON.stringify({ jsonrpc: '2.0', id, result }),
      ...(signal ? { signal } : {}),
    });
    if (response.ok) {
      await response.body?.cancel();
      return;
    }
    const message = await readResponse(response, null);
    const error = isObject(message?.error) ? message.error : undefined;
    throw new McpRpcError(
      typeof error?.code === 'number' ? error.code : -32603,
      `answer: ${typeof error?.message === 'string' ? error.message : `HTTP ${response.status}`}`,
      error?.data,
      response.status,
    );
  }

  /** The initialize handshake; keeps the session id and revision the server chose. Returns the server's capabilities. */
  async initialize(signal?: AbortSignal): Promise<Record<string, unknown>> {
    const result = await this.post(
      'initialize',
      // `tasks` is "Present if the client supports task-augmented requests" (2025-11-25): it does.
      // Elicitation declared here travels in the session id the server signs, so later requests keep it.
      { protocolVersion: LEGACY_VERSION, capabilities: { tasks: {}, ...this.answering() }, clientInfo: this.clientInfo },
      { 'mcp-protocol-version': LEGACY_VERSION },
      signal ? { signal } : {},
    );
    if (typeof result.protocolVersion === 'string') this.protocolVersion = result.protocolVersion;
    await this.notify('notifications/initialized', {});
    return isObject(result.capabilities) ? result.capabilities : {};
  }

  private legacyHeaders(): Record<string, string> {
    return { 'mcp-protocol-version': this.protocolVersion, ...(this.sessionId ? { 'mcp-session-id': this.sessionId } : {}) };
  }

  private async post(
    method: string,
    params: Record<string, unknown>,
    headers: Record<string, string>,
    options: RequestOptions,
  ): Promise<Record<string, unknown>> {
    const id = options.id ?? `${process.pid}-${++sequence}`;
    const response = await this.fetchImpl(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const session = response.headers.get('mcp-session-id');
    if (session) this.sessionId = session;
    const awsAccessDenied = await isAwsAccessDenied(response);
    const message = await readResponse(response, id, options.onNotification, options.onRequest);
    if (!message) throw new McpRpcError(-32603, `${method}: HTTP ${response.status} without a JSON-RPC answer`, undefined, response.status, awsAccessDenied);
    if (isObject(message.error)) {
      const { code, message: text, data } = message.error;
      throw new McpRpcError(typeof code === 'number' ? code : -32603, `${method}: ${String(text)}`, data, response.status);
    }
    return isObject(message.result) ? message.result : {};
  }
}

/**
 * The response to `id` (any response, for `null`) from a JSON body or an SSE stream, passing
 * notifications and server-to-client requests on as they arrive.
 */
async function readResponse(
  response: Response,
  id: string | number | null,
  onNotification?: NotificationListener,
  onRequest?: RequestListener,
): Promise<Record<string, unknown> | undefined> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream')) {
    const text = await response.text();
    try {
      const parsed: unknown = JSON.parse(text);
      // Only a JSON-RPC answer counts: a Function URL's own 403 {"Message":"Forbidden"} is JSON too, and so is an OAuth 401 {"error":…}.
      return isObject(parsed) && parsed.jsonrpc === '2.0' && ('result' in parsed || 'error' in parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  if (!response.body) return undefined;
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return undefined;
      buffer += decoder.decode(value, { stream: true });
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        else if (line === '' && data.length > 0) {
          const event = parseEvent(data.join('\n'));
          data = [];
          if (!event) continue;
          if ('result' in event || 'error' in event) {
            if (id === null || event.id === id) return event;
          } else if (typeof event.method === 'string') {
            const params = isObject(event.params) ? event.params : {};
            if (typeof event.id === 'string' || typeof event.id === 'number') onRequest?.({ id: event.id, method: event.method, params });
            else onNotification?.(event.method, params);
          }
        }
      }
    }
  } finally {
    reader.releaseLock();
    await response.body.cancel().catch(() => undefined);
  }
}

function parseEvent(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
