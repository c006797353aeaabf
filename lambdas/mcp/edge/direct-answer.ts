/**
 * A 2026-07-28 poll answered without an SDK server. The SDK's modern path builds a server, a
 * transport and a request context for every request, validates the answer with zod on its
 * way out and tears it all down after, which made a 2026-07-28 `tasks/get` cost a quarter
 * more CPU than the same poll of 2025-11-25. A dialect's `answeredDirectly` methods are plain
 * reads: for a request shaped the way a well-behaved client sends it, the edge runs the
 * method and puts its result on the wire exactly as the SDK would (the parity test,
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
} from '@modelcontextprotocol/server';
import { isObject } from '../../shared/json-values.ts';
import type { DirectMethod, McpDeps } from '../dialects/dialect.ts';
import { noteEra } from '../../observability/request-observer.ts';
import { modernRequestViewOf } from './request-view.ts';

/** The revision whose requests are answered here; any other goes to the SDK. */
const REVISION = '2026-07-28';

/** The members of a `clientInfo` this vouches for, each a string (`name` and `version` required). */
const CLIENT_INFO_MEMBERS = new Set(['name', 'version', 'title', 'description', 'websiteUrl']);

/** The request `message` (a single JSON-RPC request naming a direct method) answered, or `undefined` for the SDK to serve. */
export async function answerDirectly(
  request: Request,
  message: Record<string, unknown>,
  method: DirectMethod,
  ownerId: string,
  deps: McpDeps,
  serverInfo: Readonly<Record<string, string>>,
): Promise<Response | undefined> {
  const { id, params } = message;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  if (!isObject(params) || 'inputResponses' in params || 'requestState' in params) return undefined;
  const meta = params._meta;
  if (!isUsualEnvelope(meta)) return undefined;
  if (!isJsonContentType(request.headers.get('content-type'))) return undefined;
  const headers = request.headers;
  const name = headers.get('mcp-name');
  if (headers.get('mcp-protocol-version') !== REVISION || headers.get('mcp-method') !== message.method) return undefined;
  if (name !== null && name !== params.taskId) return undefined;
  // The SDK's own classification, so what is answered here is what it would route to its modern path.
  const route = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: REVISION,
    mcpMethodHeader: message.method as string,
    ...(name === null ? {} : { mcpNameHeader: name }),
    body: message,
  });
  if (route.kind !== 'modern' || route.messageKind !== 'request' || route.classification.revision !== REVISION) return undefined;
  noteEra('modern');
  let result: Record<string, unknown>;
  try {
    result = await method(params, modernRequestViewOf(ownerId, id, meta, headers), deps);
  } catch {
    return undefined;
  }
  return Response.json({ result: withServerInfo(result, serverInfo), jsonrpc: '2.0', id }, { status: 200, headers: { 'Content-Type': 'application/json' } });
}

/**
 * An envelope of the three members every 2026-07-28 request carries, each of a shape the SDK's
 * envelope schema accepts: the protocol version, the client's capabilities declaring
 * extensions only, and, if present, its name and version.
 */
function isUsualEnvelope(meta: unknown): meta is Record<string, unknown> {
  if (!isObject(meta)) return false;
  for (const key of Object.keys(meta)) {
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
