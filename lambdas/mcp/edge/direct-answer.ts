/**
 * A poll, or a plain async start, answered without an SDK server. For every request the SDK
 * builds a server, a transport and a request context, validates the message and the answer
 * with zod and tears it all down after: a fifth to a quarter of a poll's CPU, and on the
 * 2026-07-28 path more than the poll's GetItem. A dialect's `answeredDirectly` methods are
 * plain reads: for a request shaped the way a well-behaved client sends it, the edge runs the
 * method and puts its result on the wire exactly as the SDK would (the parity tests,
 * test/unit/direct-answers.test.ts and direct-answers-starts.test.ts, hold the two to the
 * same bytes).
 *
 * Only the plain success of a read is answered here. A request this module does not vouch for
 * (an envelope beyond the usual members, a header that does not say exactly what the body
 * says, a retry's `inputResponses`) and every read that throws go to the SDK, which validates,
 * answers and words the error as it always does; the record read is then made again.
 *
 * A start is routed as the SDK path routes it (`plainStart`), and everything that is not a
 * dialect's plain start, or is refused, goes to the SDK before anything is written. Once the
 * start has begun it is never served again (a task's id is minted per call: a second start
 * would be a second operation), so its error is answered here, worded as the SDK words it.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  type ProtocolError,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { isObject } from '../../shared/json-values.ts';
import type { DirectMethod, McpDeps } from '../dialects/dialect.ts';
import { noteEra } from '../../observability/request-observer.ts';
import { JSONRPC } from './json-rpc-errors.ts';
import { legacyRequestViewOf, modernRequestViewOf, type RequestView } from './request-view.ts';

/** The revision whose requests are answered here; any other goes to the SDK. */
const REVISION = '2026-07-28';

/** The members of a `clientInfo` this vouches for, each a string (`name` and `version` required). */
const CLIENT_INFO_MEMBERS = new Set(['name', 'version', 'title', 'description', 'websiteUrl']);

/**
 * The start of a plain async `tools/call`, as the SDK path routes it: `undefined` when the SDK is
 * to serve the call; else the start, which throws the ProtocolError the SDK path answers.
 */
export type PlainStart = (params: Record<string, unknown>, view: RequestView) => (() => Promise<Record<string, unknown>>) | undefined;

/** What the edge answers once it vouches for a request's shape, or `undefined` for the SDK to serve. */
type Answering = (params: Record<string, unknown>, view: RequestView) => Promise<Answer | undefined>;
type Answer = { result: Record<string, unknown> } | { error: ProtocolError };

/** A 2026-07-28 request `message` (one JSON-RPC request naming a direct method) answered, or `undefined` for the SDK to serve. */
export function answerModernDirectly(
  request: Request,
  message: Record<string, unknown>,
  method: DirectMethod,
  ownerId: string,
  deps: McpDeps,
  serverInfo: Readonly<Record<string, string>>,
): Promise<Response | undefined> {
  return answerModern(request, message, method.idField, ownerId, serverInfo, (params, view) => read(method(params, view, deps)));
}

/** A 2026-07-28 `tools/call` that only starts an operation, answered; `undefined` for the SDK to serve it. */
export function startModernDirectly(
  request: Request,
  message: Record<string, unknown>,
  plainStart: PlainStart,
  ownerId: string,
  serverInfo: Readonly<Record<string, string>>,
): Promise<Response | undefined> {
  if (!isPlainStart(message)) return Promise.resolve(undefined);
  // `Mcp-Name` mirrors the tool's name for a tools/call.
  return answerModern(request, message, 'name', ownerId, serverInfo, (params, view) => started(plainStart(params, view)));
}

async function answerModern(
  request: Request,
  message: Record<string, unknown>,
  idField: string,
  ownerId: string,
  serverInfo: Readonly<Record<string, string>>,
  answering: Answering,
): Promise<Response | undefined> {
  const { id, params } = message;
  if (!isPlainRequest(message) || !isObject(params)) return undefined;
  const meta = params._meta;
  if (!isUsualEnvelope(meta)) return undefined;
  if (!isJsonContentType(request.headers.get('content-type'))) return undefined;
  const headers = request.headers;
  const name = headers.get('mcp-name');
  if (headers.get('mcp-protocol-version') !== REVISION || headers.get('mcp-method') !== message.method) return undefined;
  // `Mcp-Name` mirrors the id the method reads by, and a request without it is refused (-32020): the SDK's to answer.
  if (name === null || name !== params[idField]) return undefined;
  // The SDK's own classification, so what is answered here is what it would route to its modern path.
  const route = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: REVISION,
    mcpMethodHeader: message.method as string,
    mcpNameHeader: name,
    body: message,
  });
  if (route.kind !== 'modern' || route.messageKind !== 'request' || route.classification.revision !== REVISION) return undefined;
  noteEra('modern');
  const answered = await answering(params, modernRequestViewOf(ownerId, id as string | number, meta, headers));
  if (answered === undefined) return undefined;
  if ('error' in answered) {
    // The SDK's transport answers a handler's error on HTTP 200, but for -32021, whose 400 the spec sets on the error itself.
    return asJson(errorMessage(answered.error, id as string | number), answered.error.code === JSONRPC.MISSING_CAPABILITY ? 400 : 200);
  }
  return asJson(resultMessage(withServerInfo(answered.result, serverInfo), id as string | number));
}

/**
 * An initialize-era request `message` the edge has classified as one answered at once (one
 * JSON object), answered, or `undefined` for the SDK's stateless transport to serve: what
 * that transport checks (both media types accepted, a JSON body, a protocol version it
 * supports) is checked here the same way first.
 */
export function answerLegacyDirectly(
  request: Request,
  message: Record<string, unknown>,
  method: DirectMethod,
  ownerId: string,
  deps: McpDeps,
): Promise<Response | undefined> {
  return answerLegacy(request, message, ownerId, (params, view) => read(method(params, view, deps)), asJson);
}

/**
 * An initialize-era `tools/call` that only starts an operation, answered, or `undefined` for the
 * SDK to serve it. It goes out on an SSE stream of one event, as the SDK's stateless transport
 * frames every `tools/call` (one that waits may stream progress first): clients and the request
 * scope see the same bytes either way.
 */
export function startLegacyDirectly(
  request: Request,
  message: Record<string, unknown>,
  plainStart: PlainStart,
  ownerId: string,
): Promise<Response | undefined> {
  if (!isPlainStart(message)) return Promise.resolve(undefined);
  return answerLegacy(request, message, ownerId, (params, view) => started(plainStart(params, view)), asEventStream);
}

async function answerLegacy(
  request: Request,
  message: Record<string, unknown>,
  ownerId: string,
  answering: Answering,
  frame: (message: Record<string, unknown>) => Response,
): Promise<Response | undefined> {
  const { id, params } = message;
  if (!isPlainRequest(message) || !isObject(params)) return undefined;
  const meta = params._meta ?? {};
  // Per-request capabilities are all an initialize-era request may carry in `_meta` here.
  if (!isObject(meta) || Object.keys(meta).some((key) => key !== CLIENT_CAPABILITIES_META_KEY && !isTraceContextMember(key, meta[key]))) return undefined;
  const headers = request.headers;
  const accept = headers.get('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(headers.get('content-type'))) return undefined;
  const version = headers.get('mcp-protocol-version');
  if (version === null || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  noteEra('legacy');
  const answered = await answering(params, legacyRequestViewOf(ownerId, id as string | number, meta, headers));
  if (answered === undefined) return undefined;
  // An HTTP status the error asks for (429) is set by the request scope, as on the SDK path.
  return frame('error' in answered ? errorMessage(answered.error, id as string | number) : resultMessage(answered.result, id as string | number));
}

/** The params members of a start the edge answers: the call, and the one dialect member that makes it a start. */
const START_MEMBERS = new Set(['name', 'arguments', '_meta', 'task', 'operation']);

function isPlainStart(message: Record<string, unknown>): boolean {
  return isObject(message.params) && Object.keys(message.params).every((key) => START_MEMBERS.has(key));
}

/** SEP-414's trace context in `_meta`: strings the SDK passes through, and the request span has already read. */
function isTraceContextMember(key: string, value: unknown): boolean {
  return (key === 'traceparent' || key === 'tracestate' || key === 'baggage') && typeof value === 'string';
}

/** One JSON-RPC request, as the SDK's message schema takes it, with none of a retry's members. */
function isPlainRequest(message: Record<string, unknown>): boolean {
  const { id, params } = message;
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string') return false;
  if (typeof id !== 'string' && (typeof id !== 'number' || !Number.isInteger(id))) return false;
  return !isObject(params) || !('inputResponses' in params || 'requestState' in params);
}

/** A read's result, or `undefined` when it threw (the SDK then serves the request). */
async function read(work: Promise<Record<string, unknown>>): Promise<Answer | undefined> {
  try {
    return { result: await work };
  } catch {
    return undefined;
  }
}

/**
 * A start's answer: its result or, once it has begun, its error, which is never the SDK's to
 * serve again. `undefined` when the call is no plain start (nothing has run).
 */
async function started(start: (() => Promise<Record<string, unknown>>) | undefined): Promise<Answer | undefined> {
  if (start === undefined) return undefined;
  try {
    return { result: await start() };
  } catch (error) {
    return { error: error as ProtocolError };
  }
}

/** A handler's result as the SDK's servers build the response (members in this order). */
function resultMessage(result: Record<string, unknown>, id: string | number): Record<string, unknown> {
  return { result, jsonrpc: '2.0', id };
}

/** A handler's error as the SDK's servers build the response (its codecs send the retired -32002 as -32602). */
function errorMessage(error: ProtocolError, id: string | number): Record<string, unknown> {
  const code = error.code === -32002 ? JSONRPC.INVALID_PARAMS : error.code;
  return { jsonrpc: '2.0', id, error: { code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
}

/** The JSON-RPC response as one JSON object, as the SDK's transports put it on the wire. */
function asJson(message: Record<string, unknown>, status = 200): Response {
  return Response.json(message, { status, headers: { 'Content-Type': 'application/json' } });
}

/** The JSON-RPC response as the SDK's stateless transport streams it: one event, then the end. */
function asEventStream(message: Record<string, unknown>): Response {
  return new Response(`event: message\ndata: ${JSON.stringify(message)}\n\n`, {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' },
  });
}

/**
 * An envelope of the three members every 2026-07-28 request carries, each of a shape the SDK's
 * envelope schema accepts: the protocol version, the client's capabilities declaring
 * extensions only, and, if present, its name and version.
 */
function isUsualEnvelope(meta: unknown): meta is Record<string, unknown> {
  if (!isObject(meta)) return false;
  for (const key of Object.keys(meta)) {
    if (isTraceContextMember(key, meta[key])) continue;
    if (key !== PROTOCOL_VERSION_META_KEY && key !== CLIENT_INFO_META_KEY && key !== CLIENT_CAPABILITIES_META_KEY) return false;
  }
  if (meta[PROTOCOL_VERSION_META_KEY] !== REVISION) return false;
  const info = meta[CLIENT_INFO_META_KEY];
  if (info !== undefined && !isUsualClientInfo(info)) return false;
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  if (!isObject(capabilities)) return false;
  for (const [key, value] of Object.entries(capabilities)) {
    if (key !== 'extensions' || !isObject(value)) return false;
    for (const settings of Object.values(value)) if (!isObject(settings)) return false;
  }
  return true;
}

function isUsualClientInfo(info: unknown): boolean {
  if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string') return false;
  return Object.entries(info).every(([key, value]) => CLIENT_INFO_MEMBERS.has(key) && typeof value === 'string');
}

/** The server's name and version in the result's `_meta`, as the SDK stamps every 2026-07-28 result. */
function withServerInfo(result: Record<string, unknown>, serverInfo: Readonly<Record<string, string>>): Record<string, unknown> {
  const meta = result._meta;
  if (meta === undefined) return { ...result, _meta: { [SERVER_INFO_META_KEY]: serverInfo } };
  if (!isObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return result;
  return { ...result, _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfo } };
}
