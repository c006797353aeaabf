/**
 * OAuth 2.1 resource-server settings, checked once at startup so a bad setting fails the
 * deploy or `npm start`, never the first request.
 */

/** What the operator sets: the MCP authorization spec makes this server an OAuth resource server. */
export interface OAuthConfig {
  /** The authorization server's issuer identifier, exactly as its tokens carry it in `iss`. */
  issuer: string;
  /** The `aud` tokens must carry. @default the canonical `resourceUrl` (RFC 8707) */
  audience?: string;
  /** Scopes every token must hold (all of them); a token without one gets 403. @default none */
  requiredScopes?: readonly string[];
  /** The URL clients connect to, e.g. `https://abc.lambda-url.eu-west-1.on.aws/mcp`. */
  resourceUrl: string;
}

/** The settings after checks: URLs canonical, defaults filled in. */
export interface ResolvedOAuthConfig {
  issuer: string;
  audience: string;
  requiredScopes: readonly string[];
  /** Canonical resource URI: lowercase scheme and host, no trailing slash, no fragment. */
  resourceUrl: string;
}

/** A setting that cannot work; the message says which and why. */
export class OAuthConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthConfigError';
  }
}

/** Environment variables the Lambda and `npm start` read. */
export const OAUTH_ENV = {
  issuer: 'ASYNC_MCP_OAUTH_ISSUER',
  audience: 'ASYNC_MCP_OAUTH_AUDIENCE',
  scopes: 'ASYNC_MCP_OAUTH_SCOPES',
} as const;

/** Checks the settings and fills in defaults; throws `OAuthConfigError` with a clear message. */
export function resolveOAuthConfig(config: OAuthConfig): ResolvedOAuthConfig {
  const issuer = checkIssuer(config.issuer);
  const resourceUrl = canonicalResourceUrl(config.resourceUrl);
  const audience = config.audience ?? resourceUrl;
  if (audience.trim() === '') throw new OAuthConfigError('OAuth audience must not be empty');
  const requiredScopes = [...new Set(config.requiredScopes ?? [])];
  for (const scope of requiredScopes) {
    // RFC 6749 §3.3 scope-token: printable ASCII except space, `"` and `\`.
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)) throw new OAuthConfigError(`OAuth scope "${scope}" is not a valid scope token (RFC 6749 §3.3)`);
  }
  return { issuer, audience, requiredScopes, resourceUrl };
}

/**
 * The OAuth settings from the environment, or `undefined` when no issuer is set (OAuth off).
 * Scopes are separated by spaces or commas.
 */
export function oauthConfigFromEnv(env: Record<string, string | undefined>, resourceUrl: string): OAuthConfig | undefined {
  const issuer = env[OAUTH_ENV.issuer]?.trim();
  if (!issuer) return undefined;
  const audience = env[OAUTH_ENV.audience]?.trim();
  const scopes = env[OAUTH_ENV.scopes]?.split(/[\s,]+/).filter(Boolean) ?? [];
  return { issuer, resourceUrl, requiredScopes: scopes, ...(audience ? { audience } : {}) };
}

/** Loopback hosts, where plain `http` cannot leave the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Whether a URL may carry tokens or keys: https anywhere, http only on loopback. */
export function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

// RFC 8414 §2: an https URL with no query or fragment. Kept verbatim: `iss` is compared as an exact string.
function checkIssuer(issuer: string): string {
  const url = parseUrl(issuer, 'OAuth issuer');
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new OAuthConfigError(
      `OAuth issuer ${issuer} uses http on a host that is not loopback; tokens and keys must come over https (http is allowed only on 127.0.0.1, ::1 or localhost)`,
    );
  }
  if (!isSecureOrLoopback(url)) throw new OAuthConfigError(`OAuth issuer ${issuer} must be an https URL`);
  if (url.search || url.hash || issuer.includes('#') || issuer.includes('?')) {
    throw new OAuthConfigError(`OAuth issuer ${issuer} must not have a query or fragment (RFC 8414 §2)`);
  }
  if (url.username || url.password) throw new OAuthConfigError('OAuth issuer must not carry credentials');
  return issuer;
}

/** RFC 8707 §2 / MCP "Canonical Server URI": absolute, no fragment, no trailing slash. */
function canonicalResourceUrl(resourceUrl: string): string {
  const url = parseUrl(resourceUrl, 'Resource URL');
  if (!isSecureOrLoopback(url)) throw new OAuthConfigError(`Resource URL ${resourceUrl} must be https (http only on loopback)`);
  if (url.hash || resourceUrl.includes('#')) throw new OAuthConfigError(`Resource URL ${resourceUrl} must not have a fragment (RFC 8707 §2)`);
  if (url.search) throw new OAuthConfigError(`Resource URL ${resourceUrl} should not have a query (RFC 8707 §2)`);
  if (url.username || url.password) throw new OAuthConfigError('Resource URL must not carry credentials');
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path}`;
}

function parseUrl(value: string, what: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new OAuthConfigError(`${what} "${value}" is not an absolute URL`);
  }
}
