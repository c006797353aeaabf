/**
 * Checks a POST body before the MCP SDK parses it: its size (read with a cap, never
 * buffered past it), its JSON nesting depth (a linear scan, so hostile input costs no
 * more than its length), batches per protocol revision, the length of every JSON-RPC
 * id, and the params `initialize` requires (the SDK's own check answers -32603 with its
 * raw issue list). Each refusal is an HTTP answer with a JSON-RPC error body.
 */
import { classifyInboundRequest, specTypeSchemas } from '@modelcontextprotocol/server';
import { isObject } from '../../shared/json-values.ts';
import { JSONRPC } from './json-rpc-errors.ts';
import { MAX_REQUEST_ID_LENGTH } from './request-view.ts';

/** Requests over this size get HTTP 413 with a JSON-RPC error before anything is parsed. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Arrays and objects nested deeper than this are refused (tool arguments included). */
export const MAX_JSON_DEPTH = 64;
/** Messages one batch may hold, for the revisions that still have batches (2025-03-26 and older). */
export const MAX_BATCH_MESSAGES = 10;
/** "JSON-RPC batching" was removed in this revision; later ones have none either. */
const BATCHES_REMOVED_IN = '2025-06-18';
/** "the server SHOULD assume protocol version 2025-03-26" when the header is absent (Streamable HTTP). */
const ASSUMED_VERSION = '2025-03-26';

export type GuardedBody = { ok: true; request: Request; parsedBody?: unknown; batch: boolean } | { ok: false; response: Response };

/**
 * The request to hand to the SDK, or the HTTP answer that refuses it. With the parsed JSON
 * the request's body has been read (the SDK reads `parsedBody` instead); a body that did
 * not parse is re-readable, for the SDK's own -32700.
 */
export async function guardRequestBody(request: Request): Promise<GuardedBody> {
  if (request.method.toUpperCase() !== 'POST') return { ok: true, request, batch: false };
  const text = await readBoundedText(request, MAX_BODY_BYTES);
  if (text === undefined) return refuse(413, `Request body exceeds ${MAX_BODY_BYTES} bytes`);
  if (exceedsDepth(text, MAX_JSON_DEPTH)) return refuse(400, `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The SDK answers unparseable bodies with its own -32700, read from the body.
    const forward = new Request(request.url, { method: request.method, headers: request.headers, body: text, signal: request.signal });
    return { ok: true, request: forward, batch: false };
  }
  // The SDK is handed the parsed body and reads none, so the request goes on as it came
  // (its body read): no second Request, stream and abort signal per request.
  const forward = request;
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  if (Array.isArray(parsed)) {
    const refusal = batchRefusal(parsed.length, request.headers.get('mcp-protocol-version') ?? ASSUMED_VERSION);
    if (refusal) return refuse(400, refusal);
    // 2025-03-26: "The initialize request MUST NOT be part of a JSON-RPC batch."
    if (parsed.some((message) => isObject(message) && message.method === 'initialize')) {
      return refuse(400, 'Invalid Request: initialize must not be part of a JSON-RPC batch');
    }
  }
  for (const message of messages) {
    if (isObject(message) && typeof message.id === 'string' && message.id.length > MAX_REQUEST_ID_LENGTH) {
      return refuse(400, `Invalid Request: a request id must be at most ${MAX_REQUEST_ID_LENGTH} characters`);
    }
  }
  const initialize = Array.isArray(parsed) ? undefined : initializeRefusal(request, parsed);
  if (initialize) return { ok: false, response: initialize };
  return { ok: true, request: forward, parsedBody: parsed, batch: Array.isArray(parsed) };
}

/**
 * The answer to an `initialize` request whose params are not what the method requires:
 * -32602 naming the first field at fault (JSON-RPC 2.0 §5.1 "Invalid method parameter(s)"),
 * in band as the SDK answers its other errors. `undefined` for anything else, and for
 * requests the SDK refuses before any handler runs (not JSON-RPC, a 2026-07-28 header),
 * which keep the SDK's answer.
 */
export function initializeRefusal(request: Request, message: unknown): Response | undefined {
  if (!isObject(message) || message.method !== 'initialize' || !('id' in message)) return undefined;
  const route = classifyInboundRequest({
    httpMethod: request.method,
    body: message,
    ...optional('protocolVersionHeader', request.headers.get('mcp-protocol-version')),
    ...optional('mcpMethodHeader', request.headers.get('mcp-method')),
    ...optional('mcpNameHeader', request.headers.get('mcp-name')),
  });
  if (route.kind !== 'legacy') return undefined;
  // The SDK's own schema, so what passes here passes its handler; its issue names the field.
  const checked = specTypeSchemas.InitializeRequestParams['~standard'].validate(message.params);
  const issue = checked instanceof Promise ? undefined : checked.issues?.[0];
  if (!issue) return undefined;
  const field = ['params', ...(issue.path ?? []).map((part) => String(typeof part === 'object' ? part.key : part))].join('.');
  const error = { code: JSONRPC.INVALID_PARAMS, message: `Invalid params: ${field}: ${issue.message}`, data: { field } };
  const body = { jsonrpc: '2.0', id: message.id, error };
  return Response.json(body, { status: 200 });
}

/** Why a batch of `size` messages is refused under `version`, or `undefined` when it is served. */
export function batchRefusal(size: number, version: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(version) || version >= BATCHES_REMOVED_IN) {
    return `Invalid Request: JSON-RPC batches are not supported in protocol revision ${version} (removed in ${BATCHES_REMOVED_IN}); send one message per request`;
  }
  if (size > MAX_BATCH_MESSAGES) return `Invalid Request: a JSON-RPC batch may hold at most ${MAX_BATCH_MESSAGES} messages`;
  return undefined;
}

/**
 * Whether arrays and objects nest deeper than `maxDepth`. One pass over the text that
 * counts brackets outside strings; it stops at the first level past the bound.
 */
export function exceedsDepth(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // A backslash escapes the next character, quotes included.
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The body as text, or `undefined` once it is over `maxBytes` (declared or read). */
async function readBoundedText(request: Request, maxBytes: number): Promise<string | undefined> {
  const length = request.headers.get('content-length');
  const declared = Number(length ?? 0);
  if (declared > maxBytes) return undefined;
  if (length !== null && Number.isSafeInteger(declared)) {
    // A declared length within the bound: the HTTP server reads no more than it declares, so the
    // body is read whole, without a stream reader (the local server's request then builds no
    // web stream at all). The bound still holds for a body that is not what it declared.
    const bytes = Buffer.from(await request.arrayBuffer());
    return bytes.byteLength > maxBytes ? undefined : bytes.toString('utf8');
  }
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function optional<K extends string>(key: K, value: string | null): Partial<Record<K, string>> {
  return value === null ? {} : ({ [key]: value } as Record<K, string>);
}

function refuse(status: number, message: string): GuardedBody {
  const body = { jsonrpc: '2.0', id: null, error: { code: JSONRPC.INVALID_REQUEST, message } };
  return { ok: false, response: Response.json(body, { status }) };
}
