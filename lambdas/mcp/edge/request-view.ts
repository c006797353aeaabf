/**
 * What one request tells us about its client: the era, the protocol revision and
 * the capabilities it declared for this request. The server is stateless, so
 * everything the dialects decide on is read from the request itself.
 */
import type { ServerContext } from '@modelcontextprotocol/server';
import { isObject } from '../../shared/json-values.ts';
import { sessionCapabilities } from './request-scope.ts';

export const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

export type Era = 'modern' | 'legacy';

/**
 * The longest string JSON-RPC id accepted (characters). Longer ones are refused before
 * anything runs, so no id too long to key a record alias ever reaches the core.
 */
export const MAX_REQUEST_ID_LENGTH = 256;

export interface RequestView {
  era: Era;
  /** The revision: the envelope's (modern) or the MCP-Protocol-Version header (legacy); absent when unknown. */
  protocolVersion?: string;
  /**
   * Capabilities the client declared: in this request's `_meta` and, in the legacy era, at
   * `initialize` (carried by its session id); the request's own win.
   */
  clientCapabilities: Record<string, unknown>;
  /** Legacy era: what the client declared at `initialize`, read from its session id; absent without one. */
  initializeCapabilities?: Record<string, unknown>;
  /** The JSON-RPC id as text, for logs only: 7 and "7" read the same here. */
  requestId: string;
  /** The JSON-RPC id with its type (`n:7`, `s:7`): what request aliases are keyed by. */
  requestKey: string;
  /** Hash of the authenticated principal: every record read or written is scoped to it. */
  ownerId: string;
  headers: Headers;
}

export function requestViewOf(era: Era, ownerId: string, params: { _meta?: Record<string, unknown> } | undefined, ctx: ServerContext): RequestView {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  return viewOf(era, ownerId, envelope, params?._meta ?? {}, ctx.mcpReq.id, ctx.http?.req?.headers ?? new Headers());
}

/**
 * A 2026-07-28 request's view read from its message as the client sent it, the envelope still
 * in `_meta` where the SDK would have lifted it out: what a handler's view would be.
 */
export function modernRequestViewOf(ownerId: string, id: string | number, meta: Record<string, unknown>, headers: Headers): RequestView {
  return viewOf('modern', ownerId, meta, meta, id, headers);
}

/**
 * An initialize-era request's view read from its message as the client sent it, with what its
 * session id carries: what a handler's view would be.
 */
export function legacyRequestViewOf(ownerId: string, id: string | number, meta: Record<string, unknown>, headers: Headers): RequestView {
  return viewOf('legacy', ownerId, meta, meta, id, headers);
}

function viewOf(era: Era, ownerId: string, envelope: Record<string, unknown>, meta: Record<string, unknown>, id: unknown, headers: Headers): RequestView {
  const capabilities = envelope[CLIENT_CAPABILITIES_KEY] ?? meta[CLIENT_CAPABILITIES_KEY];
  const session = era === 'legacy' ? sessionCapabilities() : undefined;
  const version = era === 'modern' ? envelope[PROTOCOL_VERSION_KEY] : headers.get('mcp-protocol-version');
  return {
    era,
    ...(typeof version === 'string' ? { protocolVersion: version } : {}),
    clientCapabilities: { ...session, ...(isObject(capabilities) ? capabilities : {}) },
    ...(session ? { initializeCapabilities: session } : {}),
    requestId: String(id),
    requestKey: requestKeyOf(id) ?? `s:${String(id)}`,
    ownerId,
    headers,
  };
}

/**
 * A JSON-RPC id as a typed key: "An identifier established by the Client that MUST contain
 * a String, Number, or NULL value" (JSON-RPC 2.0 §4), so 7 and "7" are two requests.
 * `undefined` for anything that is not a string or a number.
 */
export function requestKeyOf(id: unknown): string | undefined {
  if (typeof id === 'number' && Number.isFinite(id)) return `n:${id}`;
  if (typeof id === 'string') return `s:${id}`;
  return undefined;
}
