/**
 * Server validation of SEP-2243 custom headers (2026-07-28 Streamable HTTP, "Server Behavior
 * for Custom Headers"). For every `x-mcp-header` the called tool declares, a value in the
 * body's arguments must come with an `Mcp-Param-{Name}` header that decodes to the same
 * value; a null or absent value needs no header. Anything else is refused with HTTP 400 and
 * -32020 (HeaderMismatch), before the call runs. The SDK does this only for tools its
 * McpServer registered; ours are listed by hand, so the check runs here, ahead of the SDK.
 */
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import type { ToolCatalog, ToolSpec } from '../../operations/tool-spec.ts';
import { isObject } from '../../shared/json-values.ts';
import { headerDeclarationsOf, type HeaderDeclaration } from '../../tools/header-declarations.ts';
import { JSONRPC } from './json-rpc-errors.ts';

export const PARAM_HEADER_PREFIX = 'Mcp-Param-';

const SENTINEL_START = '=?base64?';
const SENTINEL_END = '?=';
/** Canonical Base64: the spec's test cases refuse bad padding and characters outside the alphabet. */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * The HTTP 400 answer for a 2026-07-28 `tools/call` whose `Mcp-Param-*` headers disagree with
 * its arguments, or `undefined` to serve it. Other requests, legacy-era ones (whose transport
 * has no custom headers) and requests the SDK will refuse on its own pass through.
 */
export function customHeaderRefusal(request: Request, body: unknown, catalog: ToolCatalog): Response | undefined {
  if (!isObject(body) || body.method !== 'tools/call' || !isObject(body.params)) return undefined;
  const route = classifyInboundRequest({
    httpMethod: request.method,
    body,
    ...optional('protocolVersionHeader', request.headers.get('mcp-protocol-version')),
    ...optional('mcpMethodHeader', request.headers.get('mcp-method')),
    ...optional('mcpNameHeader', request.headers.get('mcp-name')),
  });
  if (route.kind !== 'modern') return undefined;
  const tool = typeof body.params.name === 'string' ? catalog.get(body.params.name) : undefined;
  if (!tool) return undefined;
  const mismatch = customHeaderMismatch(tool, body.params.arguments, request.headers);
  if (!mismatch) return undefined;
  const error = {
    code: JSONRPC.HEADER_MISMATCH,
    message: `Bad Request: the request headers and body disagree: ${mismatch.problem}`,
    data: { mismatch: { header: mismatch.header, body: mismatch.body } },
  };
  return Response.json({ jsonrpc: '2.0', id: body.id ?? null, error }, { status: 400 });
}

export interface HeaderMismatch {
  /** The header at fault, `Mcp-Param-{Name}`. */
  header: string;
  /** The argument it mirrors, as a dotted path. */
  body: string;
  problem: string;
}

/** The first `x-mcp-header` declaration of `tool` that the headers do not honour. */
export function customHeaderMismatch(tool: ToolSpec, args: unknown, headers: Headers): HeaderMismatch | undefined {
  const found = headerDeclarationsOf(tool.inputSchema);
  // A tool with invalid declarations never loads (crossFieldProblems); nothing to check here.
  if (!found.ok) return undefined;
  for (const declaration of found.declarations) {
    const problem = headerProblem(declaration, args, headers);
    if (problem) return { header: `${PARAM_HEADER_PREFIX}${declaration.headerName}`, body: declaration.path.join('.'), problem };
  }
  return undefined;
}

function optional<K extends string>(key: K, value: string | null): Partial<Record<K, string>> {
  return value === null ? {} : ({ [key]: value } as Record<K, string>);
}

function headerProblem(declaration: HeaderDeclaration, args: unknown, headers: Headers): string | undefined {
  const header = `${PARAM_HEADER_PREFIX}${declaration.headerName}`;
  const bodyValue = valueAt(args, declaration.path);
  // "If the value is null or the parameter is omitted, the client MUST omit the header": nothing to compare.
  if (bodyValue === undefined || bodyValue === null) return undefined;
  const expected = headerText(bodyValue);
  // A value of the wrong type is the argument validator's to refuse, with -32602.
  if (expected === undefined) return undefined;
  const raw = headers.get(header);
  if (raw === null) return `the body carries ${declaration.path.join('.')} but the ${header} header is absent`;
  const decoded = decodeHeaderValue(raw);
  if (decoded === undefined) return `the ${header} header is not valid Base64 of UTF-8 text inside ${SENTINEL_START}…${SENTINEL_END}`;
  const same = declaration.type === 'integer' && typeof bodyValue === 'number' && DECIMAL.test(decoded) ? Number(decoded) === bodyValue : decoded === expected;
  return same ? undefined : `the ${header} header does not match ${declaration.path.join('.')} in the body`;
}

/**
 * A header value as text: `=?base64?…?=` is Base64 of UTF-8; anything else, including a
 * value that only starts or only ends like the sentinel, is literal. `undefined` when the
 * sentinel holds no canonical Base64 of valid UTF-8.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END) && value.length >= SENTINEL_START.length + SENTINEL_END.length)) {
    return value;
  }
  const payload = value.slice(SENTINEL_START.length, value.length - SENTINEL_END.length);
  if (!CANONICAL_BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}

/** How a client writes a body value into its header: strings as they are, numbers in decimal, booleans in lower case. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (!isObject(node)) return undefined;
    node = node[key];
  }
  return node;
}
