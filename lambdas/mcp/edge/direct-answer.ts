/**
 * A poll answered without an SDK server. For every request the SDK builds a server, a
 * transport and a request context, validates the message and the answer with zod and tears
 * it all down after: a fifth to a quarter of a poll's CPU, and on the 2026-07-28 path more
 * than the poll's GetItem. A dialect's `answeredDirectly` methods are plain reads: for a
 * request shaped the way a well-behaved client sends it, the edge runs the method and puts
 * its result on the wire exactly as the SDK would (the parity test,
 * test/unit/direct-answers.test.ts, holds the two to the same bytes).
 *
 * Only the plain success is answered here. A request this module does not vouch for (an
 * envelope beyond the usual members, a header that does not say exactly what the body says, a
 * retry's `inputResponses`) and every method that throws go to the SDK, which validates,
 * answers and words the error as it always does; the record read is then made again.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { isObject } from '../../shared/json-values.ts';
import type { DirectMethod, McpDeps } from '../dialects/dialect.ts';
import { noteEra } from '../../observability/request-observer.ts';
import { legacyRequestViewOf, modernRequestViewOf } from './request-view.ts';

/** The revision whose requests are answered here; any other goes to the SDK. */
const REVISION = '2026-07-28';

/** The members of a `clientInfo` this vouches for, each a string (`name` and `version` required). */
const CLIENT_INFO_MEMBERS = new Set(['name', 'version', 'title', 'description', 'websiteUrl']);

/** A 2026-07-28 request `message` (one JSON-RPC request naming a direct method) answered, or `undefined` for the SDK to serve. */
export async function answerModernDirectly(
  request: Request,
  message: Record<string, unknown>,
  method: DirectMethod,
  ownerId: string,
  deps: McpDeps,
  serverInfo: Readonly<Record<string, string>>,
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
  if (name === null || name !== params[method.idField]) return undefined;
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
  const result = await settled(method(params, modernRequestViewOf(ownerId, id as string | number, meta, headers), deps));
  return result && answer(withServerInfo(result, serverInfo), id as string | number);
}

/**
 * An initialize-era request `message` the edge has classified as one answered at once (one
 * JSON object), answered, or `undefined` for the SDK's stateless transport to serve: what
 * that transport checks (both media types accepted, a JSON body, a protocol version it
 * supports) is checked here the same way first.
 */
export async function answerLegacyDirectly(
  request: Request,
  message: Record<string, unknown>,
  method: DirectMethod,
  ownerId: string,
  deps: McpDeps,
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
  const result = await settled(method(params, legacyRequestViewOf(ownerId, id as string | number, meta, headers), deps));
  return result && answer(result, id as string | number);
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

/** The method's result, or `undefined` when it threw (the SDK then serves the request). */
async function settled(work: Promise<Record<string, unknown>>): Promise<Record<string, unknown> | undefined> {
  try {
    return await work;
  } catch {
    return undefined;
  }
}

/** The JSON-RPC response as the SDK's transports put it on the wire. */
function answer(result: Record<string, unknown>, id: string | number): Response {
  return Response.json({ result, jsonrpc: '2.0', id }, { status: 200, headers: { 'Content-Type': 'application/json' } });
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
