/**
 * What one request tells us about its client: the era, the protocol revision and
 * the capabilities it declared for this request. The server is stateless, so
 * everything the dialects decide on is read from the request itself.
 */
import type { ServerContext } from '@modelcontextprotocol/server';

export const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

export type Era = 'modern' | 'legacy';

export interface RequestView {
  era: Era;
  /** The revision: the envelope's (modern) or the MCP-Protocol-Version header (legacy); absent when unknown. */
  protocolVersion?: string;
  /** Capabilities the client declared in this request's `_meta`. */
  clientCapabilities: Record<string, unknown>;
  requestId: string;
  /** Hash of the authenticated principal: every record read or written is scoped to it. */
  ownerId: string;
  headers: Headers;
}

export function requestViewOf(
  era: Era,
  ownerId: string,
  params: { _meta?: Record<string, unknown> } | undefined,
  ctx: ServerContext,
): RequestView {
  const headers = ctx.http?.req?.headers ?? new Headers();
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const meta = params?._meta ?? {};
  const capabilities = envelope[CLIENT_CAPABILITIES_KEY] ?? meta[CLIENT_CAPABILITIES_KEY];
  const version = era === 'modern' ? envelope[PROTOCOL_VERSION_KEY] : headers.get('mcp-protocol-version');
  return {
    era,
    ...(typeof version === 'string' ? { protocolVersion: version } : {}),
    clientCapabilities: isObject(capabilities) ? capabilities : {},
    requestId: String(ctx.mcpReq.id),
    ownerId,
    headers,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
