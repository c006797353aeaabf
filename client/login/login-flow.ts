/**
 * `async-mcp login <url>` and `logout <url>`: the MCP authorization flow of a native app.
 * The server's 401 names its protected resource metadata (RFC 9728); the SDK's `auth()`
 * finds the authorization server (RFC 8414 / OpenID discovery), registers the CLI (RFC 7591),
 * and builds the authorization request with PKCE S256, the resource indicator (RFC 8707) and
 * the scopes the metadata names. The browser comes back to a loopback listener (RFC 8252),
 * and the code is exchanged for tokens kept in the login store.
 */
import { auth, extractWWWAuthenticateParams, type OAuthDiscoveryState } from '@modelcontextprotocol/client';
import type { FetchLike } from '../mcp-connection.ts';
import { LEGACY_VERSION } from '../mcp-connection.ts';
import type { FileLoginStore } from '../stores/login-store.ts';
import { sdkFetch } from './login-fetch.ts';
import { listenForCallback } from './loopback-callback.ts';
import { openableUrl } from './open-browser.ts';
import { StoredLoginProvider } from './stored-login-provider.ts';

/** How long `login` waits for the browser to come back. */
export const DEFAULT_LOGIN_TIMEOUT_MS = 5 * 60_000;

export interface LoginOptions {
  store: FileLoginStore;
  /** Shows the authorization URL to the user (and opens a browser); called once per login. */
  onAuthorizationUrl: (url: URL, redirectUri: string) => void | Promise<void>;
  /** @default DEFAULT_LOGIN_TIMEOUT_MS */
  timeoutMs?: number;
  fetch?: FetchLike;
}

export type LoginOutcome =
  | { loggedIn: true; url: string; resource: string; scope?: string; expiresInSeconds?: number }
  /** The server answered without asking for credentials: there is nothing to log in to. */
  | { loggedIn: false; url: string; httpStatus: number };

/** Signs in to the MCP server at `url` and keeps the login; a login kept before is replaced. */
export async function login(url: string, options: LoginOptions): Promise<LoginOutcome> {
  const fetchFn = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  // MCP authorization: the client learns where to sign in from the server's 401 challenge.
  const probe = await fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LEGACY_VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'async-mcp-login', method: 'ping' }),
  }).catch((error: unknown) => {
    const cause = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    throw new Error(`Could not reach ${url}: ${cause}`, { cause: error });
  });
  await probe.body?.cancel();
  if (probe.status !== 401) return { loggedIn: false, url, httpStatus: probe.status };
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(probe);

  const kept = await options.store.get(url);
  const keptRedirect = (kept?.client as { redirect_uris?: string[] } | undefined)?.redirect_uris?.[0];
  // The same port as last time keeps the registered redirect URI exact, for servers that compare ports.
  const callback = await listenForCallback(keptRedirect ? Number(new URL(keptRedirect).port) : 0);
  try {
    const provider = new StoredLoginProvider(options.store, url, {
      redirectUrl: callback.redirectUri,
      onAuthorizationUrl: (authorizationUrl) => {
        // Checked here, not only in the opener, so that no caller of login() shows or opens such a URL.
        if (!openableUrl(authorizationUrl)) throw unopenable(authorizationUrl, provider.discoveryState());
        return options.onAuthorizationUrl(authorizationUrl, callback.redirectUri);
      },
    });
    await provider.load();
    // A new login looks the server up again, and registers again when the redirect URI changed.
    await provider.invalidateCredentials('discovery');
    if (keptRedirect && keptRedirect !== callback.redirectUri) await provider.invalidateCredentials('client');
    const authOptions = { serverUrl: url, ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}), fetchFn: sdkFetch(fetchFn) };
    // Forced: a kept refresh token would otherwise renew the old login instead of asking who signs in.
    const first = await auth(provider, { ...authOptions, forceReauthorization: true });
    if (first !== 'REDIRECT') throw new Error(`The authorization server signed the CLI in without a user (${first}); async-mcp login needs a browser sign-in`);
    const answer = await callback.wait(provider.expectedState, options.timeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS);
    await auth(provider, { ...authOptions, authorizationCode: answer.code, ...(answer.iss ? { iss: answer.iss } : {}) });
    const saved = await options.store.get(url);
    if (!saved?.tokens) throw new Error('The sign-in completed but no tokens were kept');
    return {
      loggedIn: true,
      url,
      resource: saved.resource,
      ...(saved.tokens.scope ? { scope: saved.tokens.scope } : {}),
      ...(saved.tokens.expires_in === undefined ? {} : { expiresInSeconds: saved.tokens.expires_in }),
    };
  } finally {
    await callback.close();
  }
}

/** The refusal of an authorization URL no browser should be sent to, naming the metadata it came from. */
function unopenable(url: URL, discovery: OAuthDiscoveryState | undefined): Error {
  const scheme = url.protocol === 'http:' ? `http: to ${url.hostname}, which is not a loopback host` : url.protocol;
  // The SDK builds the URL from the authorization server's authorization_endpoint, or, without its metadata, from the server's own URL.
  const source = discovery?.authorizationServerMetadata
    ? `authorization_endpoint in the authorization server metadata of ${discovery.authorizationServerUrl}`
    : `authorization_servers in the protected resource metadata${discovery?.resourceMetadataUrl ? ` at ${discovery.resourceMetadataUrl}` : ''}`;
  return new Error(
    `Refusing to open the authorization URL: its scheme is ${scheme} (from ${source}). async-mcp login opens only https: URLs, or http: to a loopback host`,
  );
}

export interface LogoutOutcome {
  /** Whether a login was kept for the URL. */
  loggedOut: boolean;
  /** Whether the authorization server confirmed the refresh token revoked (RFC 7009); `undefined` when not tried. */
  revoked?: boolean;
}

/**
 * Forgets the login kept for `url`, after asking the authorization server to revoke its
 * refresh token (best effort: the login is removed whatever the server answers).
 */
export async function logout(url: string, store: FileLoginStore, fetchFn: FetchLike = (input, init) => fetch(input, init)): Promise<LogoutOutcome> {
  const kept = await store.get(url).catch(() => undefined);
  const revoked = kept ? await revoke(kept, fetchFn) : undefined;
  const loggedOut = await store.delete(url);
  return { loggedOut, ...(revoked === undefined ? {} : { revoked }) };
}

async function revoke(kept: Awaited<ReturnType<FileLoginStore['get']>>, fetchFn: FetchLike): Promise<boolean | undefined> {
  const endpoint = (kept?.discovery?.authorizationServerMetadata as { revocation_endpoint?: string } | undefined)?.revocation_endpoint;
  const token = kept?.tokens?.refresh_token;
  const clientId = kept?.client?.client_id;
  if (!endpoint || !token || !clientId) return undefined;
  try {
    const response = await fetchFn(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, token_type_hint: 'refresh_token', client_id: clientId }).toString(),
      signal: AbortSignal.timeout(5000),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    // Unreachable server: the local login is removed all the same, and the caller says it was not revoked.
    return false;
  }
}
