/**
 * RFC 9728 protected-resource metadata: how an MCP client finds the authorization server.
 * Served at the well-known URL for the resource's path and at the root well-known URL,
 * the two places the MCP spec tells clients to look.
 */
import type { ResolvedOAuthConfig } from './oauth-config.ts';

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The RFC 9728 §2 document. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
}

/** The document for this resource; `scopes_supported` only when scopes are required. */
export function protectedResourceMetadata(config: ResolvedOAuthConfig): ProtectedResourceMetadata {
  return {
    resource: config.resourceUrl,
    authorization_servers: [config.issuer],
    ...(config.requiredScopes.length > 0 ? { scopes_supported: [...config.requiredScopes] } : {}),
    bearer_methods_supported: ['header'],
  };
}

/**
 * The metadata URL named in `WWW-Authenticate` (RFC 9728 §3.1): the well-known segment
 * inserted before the resource's path, e.g. `https://h/.well-known/oauth-protected-resource/mcp`.
 */
export function protectedResourceMetadataUrl(resourceUrl: string): string {
  const url = new URL(resourceUrl);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}${WELL_KNOWN}${path}`;
}

/** The request paths that serve the document: the resource's own well-known path and the root one. */
export function protectedResourceMetadataPaths(resourceUrl: string): string[] {
  const own = new URL(protectedResourceMetadataUrl(resourceUrl)).pathname;
  return own === WELL_KNOWN ? [WELL_KNOWN] : [own, WELL_KNOWN];
}

/**
 * The metadata response for a request to one of those paths, or `undefined` for any other
 * path. Public and readable cross-origin, since browser-based clients fetch it too.
 */
export function protectedResourceMetadataResponseFor(config: ResolvedOAuthConfig, request: Request): Response | undefined {
  const { pathname } = new URL(request.url);
  if (!protectedResourceMetadataPaths(config.resourceUrl).includes(pathname)) return undefined;
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'GET, HEAD, OPTIONS',
    'access-control-allow-headers': '*',
  };
  if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: cors });
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return Response.json({ error: 'method_not_allowed', error_description: 'Use GET' }, { status: 405, headers: { ...cors, allow: 'GET, HEAD, OPTIONS' } });
  }
  const body = request.method === 'HEAD' ? null : JSON.stringify(protectedResourceMetadata(config));
  return new Response(body, {
    status: 200,
    headers: { ...cors, 'content-type': 'application/json', 'cache-control': 'public, max-age=300' },
  });
}
