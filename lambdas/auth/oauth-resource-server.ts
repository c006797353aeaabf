/**
 * The OAuth 2.1 resource server of the MCP authorization spec, as two fetch-style calls the
 * HTTP edge makes before anything else: serve RFC 9728 metadata, and authenticate the
 * bearer token of every other request. Answers follow RFC 6750 §3 and RFC 9728 §5.1.
 */
import type { Logger } from '../operations/ports.ts';
import type { FetchLike } from './issuer-metadata.ts';
import { resolveOAuthConfig, type OAuthConfig, type ResolvedOAuthConfig } from './oauth-config.ts';
import { oauthPrincipal } from './principals.ts';
import { protectedResourceMetadataResponseFor, protectedResourceMetadataUrl } from './protected-resource-metadata.ts';
import { createTokenVerifier } from './token-verifier.ts';

export type AuthenticationResult = { ok: true; principal: string; scopes: string[] } | { ok: false; response: Response };

export interface OAuthResourceServer {
  /** The checked settings (canonical resource URL, audience filled in). */
  readonly config: ResolvedOAuthConfig;
  /** The metadata URL that `WWW-Authenticate` names. */
  readonly metadataUrl: string;
  /**
   * The caller's principal (`oauth:<iss>#<sub>`) and scopes, or the response to send:
   * 401 without or with a bad token, 403 without a required scope, 503 when the issuer
   * cannot be reached.
   */
  authenticate(request: Request): Promise<AuthenticationResult>;
  /** The RFC 9728 metadata response when the request is for it; otherwise `undefined`. */
  protectedResourceMetadataResponse(request: Request): Response | undefined;
}

export interface OAuthResourceServerOptions {
  logger: Logger;
  /** @default globalThis.fetch */
  fetch?: FetchLike;
}

/**
 * Checks the settings now (throws `OAuthConfigError`); contacts the issuer only on the
 * first `authenticate`, so a cold start costs nothing until a token arrives.
 */
export function createOAuthResourceServer(settings: OAuthConfig, options: OAuthResourceServerOptions): OAuthResourceServer {
  const config = resolveOAuthConfig(settings);
  const metadataUrl = protectedResourceMetadataUrl(config.resourceUrl);
  const verifier = createTokenVerifier(config, options.fetch ? { fetch: options.fetch } : {});
  const scopeParam: Record<string, string> = config.requiredScopes.length > 0 ? { scope: config.requiredScopes.join(' ') } : {};
  // RFC 6750 §3: the challenge carries the error (none when no token came), the scopes and, per RFC 9728 §5.1, the metadata URL.
  const refuse = (status: 401 | 403, error: string | undefined, description: string): AuthenticationResult => {
    const params = { ...(error ? { error, error_description: description } : {}), ...scopeParam, resource_metadata: metadataUrl };
    const response = Response.json(
      { error: error ?? 'unauthorized', error_description: description },
      { status, headers: { 'www-authenticate': bearerChallenge(params), 'cache-control': 'no-store' } },
    );
    return { ok: false, response };
  };

  return {
    config,
    metadataUrl,
    protectedResourceMetadataResponse: (request) => protectedResourceMetadataResponseFor(config, request),
    async authenticate(request) {
      const token = bearerToken(request.headers.get('authorization'));
      if (token === undefined) return refuse(401, undefined, 'A bearer token is required');
      const verified = await verifier.verify(token);
      if (!verified.ok && 'unavailable' in verified) {
        options.logger.error('token verification unavailable', { error: `${verified.unavailable.name}: ${verified.unavailable.message}` });
        return { ok: false, response: unavailable() };
      }
      if (!verified.ok) {
        options.logger.warn('token rejected', { reason: verified.rejection.description });
        return refuse(401, 'invalid_token', verified.rejection.description);
      }
      const missing = config.requiredScopes.filter((scope) => !verified.scopes.includes(scope));
      if (missing.length > 0) {
        options.logger.warn('token rejected', { reason: 'insufficient scope', missing: missing.join(' ') });
        return refuse(403, 'insufficient_scope', 'The access token lacks a required scope');
      }
      return { ok: true, principal: oauthPrincipal(verified.issuer, verified.subject), scopes: verified.scopes };
    },
  };
}

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1; the scheme is
 * case-insensitive), `''` for a Bearer header whose value is not a b64token, and
 * `undefined` when there is no Bearer header at all.
 */
export function bearerToken(header: string | null): string | undefined {
  if (header === null) return undefined;
  const match = /^Bearer[ ]+(.*)$/i.exec(header.trim());
  if (!match) return undefined;
  const [, token = ''] = match;
  return /^[A-Za-z0-9\-._~+/]+=*$/.test(token) ? token : '';
}

/** `Bearer k="v", ...`; values are our own fixed text and URLs, quoted per RFC 9110 §11.4. */
function bearerChallenge(params: Record<string, string>): string {
  const quoted = Object.entries(params).map(([key, value]) => `${key}="${value.replace(/["\\]/g, '\\$&')}"`);
  return `Bearer ${quoted.join(', ')}`;
}

function unavailable(): Response {
  return Response.json(
    { error: 'temporarily_unavailable', error_description: 'The authorization server cannot be reached; try again shortly' },
    { status: 503, headers: { 'retry-after': '10', 'cache-control': 'no-store' } },
  );
}
