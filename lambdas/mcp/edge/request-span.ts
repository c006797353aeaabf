/**
 * An MCP request's SERVER span, named and attributed as OpenTelemetry's MCP semantic
 * conventions say (`{mcp.method.name} {target}`), the child of the `traceparent` in its
 * `params._meta` (SEP-414), else of its HTTP `traceparent` header. Only names, ids and
 * versions go on it: no arguments, results, tokens or question contents.
 */
import { createHash } from 'node:crypto';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { MCP_ATTRIBUTES, mcpSpanName } from '../../observability/span-names.ts';
import { baggageFromMeta, traceCarrierFromHeaders, traceCarrierFromMeta } from '../../observability/trace-context.ts';
import { SpanKind, withSpan } from '../../observability/tracing.ts';
import { isObject } from '../../shared/json-values.ts';

/** Methods whose span names their target: the tool or prompt the request names (low cardinality, never an argument). */
const TARGET_PARAM: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name' };
// A target is a catalog name; anything longer is not one worth a span name.
const MAX_TARGET_CHARS = 128;

/**
 * Runs `serve` in the request's span; call it only with tracing on (the poll path pays nothing
 * otherwise). `isTarget` says which names are the server's own (its tools): a name a client made
 * up may hold anything, and stays out of the span.
 */
export function withRequestSpan(body: unknown, headers: Headers, isTarget: (name: string) => boolean, serve: () => Promise<Response>): Promise<Response> {
  const message = isObject(body) && typeof body.method === 'string' ? body : undefined;
  const method = message?.method as string | undefined;
  const params = message && isObject(message.params) ? message.params : undefined;
  const targetParam = method === undefined ? undefined : TARGET_PARAM[method];
  const rawTarget = targetParam && params ? params[targetParam] : undefined;
  const target = typeof rawTarget === 'string' && rawTarget.length <= MAX_TARGET_CHARS && isTarget(rawTarget) ? rawTarget : undefined;
  const carrier = traceCarrierFromMeta(params) ?? traceCarrierFromHeaders(headers);
  const baggage = carrier && traceCarrierFromMeta(params) ? baggageFromMeta(params) : (headers.get('baggage') ?? undefined);
  const attributes: Record<string, string> = {
    [MCP_ATTRIBUTES.networkTransport]: 'tcp',
    [MCP_ATTRIBUTES.networkProtocol]: 'http',
  };
  if (method !== undefined) attributes[MCP_ATTRIBUTES.method] = method;
  const id = message?.id;
  if (typeof id === 'string' || typeof id === 'number') attributes[MCP_ATTRIBUTES.requestId] = String(id);
  if (method === 'tools/call' && target !== undefined) {
    attributes[MCP_ATTRIBUTES.toolName] = target;
    attributes[MCP_ATTRIBUTES.operationName] = 'execute_tool';
  }
  const version = (isObject(params?._meta) ? params._meta[PROTOCOL_VERSION_META_KEY] : undefined) ?? headers.get('mcp-protocol-version');
  if (typeof version === 'string' && version.length <= 32) attributes[MCP_ATTRIBUTES.protocolVersion] = version;
  const session = headers.get('mcp-session-id');
  // A session id may work as a bearer: only a digest of it, as the conventions suggest.
  if (session) attributes[MCP_ATTRIBUTES.sessionId] = createHash('sha256').update(session).digest('hex').slice(0, 16);
  return withSpan(
    mcpSpanName(method ?? (isObject(body) && ('result' in body || 'error' in body) ? 'response' : 'mcp'), target),
    { kind: SpanKind.SERVER, attributes, ...(carrier ? { parent: baggage ? { ...carrier, baggage } : carrier } : {}) },
    async (span) => {
      const response = await serve();
      if (response.status >= 400) span.setAttribute(MCP_ATTRIBUTES.errorType, String(response.status));
      return response;
    },
  );
}
