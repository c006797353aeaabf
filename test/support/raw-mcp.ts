import { request as httpRequest } from 'node:http';
/**
 * Raw JSON-RPC over HTTP for the cases real clients never produce (bad JSON, huge
 * bodies, hand-made dialect calls). Handles both JSON and SSE response bodies.
 */
export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2025-11-25';

export interface RawResponse {
  status: number;
  headers: Headers;
  /** The JSON-RPC message, when the body held one. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read raw JSON-RPC results field by field; each expect checks the shape
  message?: { id?: unknown; result?: any; error?: { code: number; message: string; data?: unknown } };
  text: string;
}

let nextId = 1;

export async function postRaw(url: URL | string, body: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, ...parseBody(text) };
}

/**
 * The JSON-RPC messages of a response body, in order, whichever framing the server chose:
 * one JSON object (or batch), or SSE events (Streamable HTTP allows either).
 */
// biome-ignore lint/suspicious/noExplicitAny: tests read raw JSON-RPC results field by field; each expect checks the shape
export function jsonRpcMessagesOf(text: string): any[] {
  const trimmed = text.trim();
  if (!trimmed) return [];
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return [JSON.parse(trimmed)].flat();
  return trimmed
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)));
}

/** The response message of a body (the last one that is a result or an error). */
function parseBody(text: string): { message?: RawResponse['message'] } {
  const responses = jsonRpcMessagesOf(text).filter((m) => 'result' in m || 'error' in m);
  return responses.length ? { message: responses.at(-1) } : {};
}

export interface CallOptions {
  /** Capabilities declared in this request's `_meta`. */
  capabilities?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Standard headers to leave out (lower case), for header-validation cases. */
  omitHeaders?: string[];
  id?: string | number;
}

/** A 2026-07-28 request: the per-request envelope plus the matching headers. */
export function modernRequest(url: URL | string, method: string, params: Record<string, unknown> = {}, options: CallOptions = {}) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? {},
    ...((params._meta as object | undefined) ?? {}),
  };
  const headers: Record<string, string> = { ...standardModernHeaders(method, params), ...options.headers };
  for (const omitted of options.omitHeaders ?? []) delete headers[omitted];
  return postRaw(url, JSON.stringify({ jsonrpc: '2.0', id: options.id ?? nextId++, method, params: { ...params, _meta: meta } }), headers);
}

/** The 2026-07-28 standard headers: protocol version, Mcp-Method and Mcp-Name (name, uri or taskId). */
function standardModernHeaders(method: string, params: Record<string, unknown>): Record<string, string> {
  const name = [params.name, params.uri, params.taskId].find((v): v is string => typeof v === 'string');
  return { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) };
}

/** What a raw dispatch answers: the JSON-RPC result or error of one request. */
// biome-ignore lint/suspicious/noExplicitAny: tests read raw JSON-RPC results field by field; each expect checks the shape
export type DispatchResponse = { kind: 'result'; result: any } | { kind: 'error'; error: { code: number; message: string; data?: unknown } };

/**
 * A `rawDispatch` for `@modelcontextprotocol/ext-tasks/client`: posts an already framed
 * 2026-07-28 request (its `_meta` set by the session) with the standard headers.
 */
export function modernDispatch(url: URL | string, headers: Record<string, string> = {}) {
  return async (request: unknown): Promise<DispatchResponse> => {
    const { method, params = {}, id } = request as { method: string; params?: Record<string, unknown>; id?: string | number };
    const body = JSON.stringify({ jsonrpc: '2.0', id: id ?? nextId++, method, params });
    const response = await postRaw(url, body, { ...standardModernHeaders(method, params), ...headers });
    if (!response.message) throw new Error(`no JSON-RPC response to ${method} (HTTP ${response.status})`);
    return response.message.error ? { kind: 'error', error: response.message.error } : { kind: 'result', result: response.message.result };
  };
}

/** A 2025-era request (stateless: no initialize needed per request). */
export function legacyRequest(url: URL | string, method: string, params: Record<string, unknown> = {}, options: CallOptions & { version?: string } = {}) {
  const meta = options.capabilities ? { 'io.modelcontextprotocol/clientCapabilities': options.capabilities } : undefined;
  const body = {
    jsonrpc: '2.0',
    id: options.id ?? nextId++,
    method,
    params: { ...params, ...(meta ? { _meta: { ...meta, ...((params._meta as object) ?? {}) } } : {}) },
  };
  return postRaw(url, JSON.stringify(body), { 'mcp-protocol-version': options.version ?? LEGACY_VERSION, ...options.headers });
}

/** A JSON-RPC notification (no id) in the legacy framing. */
export function legacyNotification(url: URL | string, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
  return postRaw(url, JSON.stringify({ jsonrpc: '2.0', method, params }), { 'mcp-protocol-version': LEGACY_VERSION, ...headers });
}

/** A POST through node:http, which (unlike fetch) lets a test send any Host header. */
export function postWithHost(url: URL, host: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
