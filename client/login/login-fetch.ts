/**
 * The fetch every command uses when no token or SigV4 is asked for: it sends the access
 * token of the login kept for the request's server, renews it when it has expired, or when
 * the server answers 401, and turns a 401 it cannot cure into a LoginRequiredError that says
 * which `async-mcp login` to run.
 *
 * A renewal holds the login's lock file and reads the login again first: when another
 * process renewed it meanwhile, its tokens are used. Two processes refreshing with one
 * refresh token would get the grant revoked by servers that detect refresh-token reuse
 * (oidc-provider, Auth0, Okta), and the user logged out.
 */
import { auth, extractWWWAuthenticateParams, type FetchLike as SdkFetchLike } from '@modelcontextprotocol/client';
import { cliCommand } from '../cli-command.ts';
import type { FetchLike } from '../mcp-connection.ts';
import { DEFAULT_STALE_LOCK_MS } from '../stores/file-lock.ts';
import type { FileLoginStore, StoredLogin } from '../stores/login-store.ts';
import { StoredLoginProvider } from './stored-login-provider.ts';

/** Refresh this long before the token's end, so a request does not arrive just after it. */
const EXPIRY_MARGIN_MS = 30_000;
/** A renewal's requests end before its lock counts as abandoned, so no other process breaks a live one. */
const RENEWAL_TIMEOUT_MS = DEFAULT_STALE_LOCK_MS - 5_000;

/** The server wants a login the CLI does not have (any more). */
export class LoginRequiredError extends Error {
  readonly url: string;
  constructor(url: string, reason: 'none' | 'expired', options?: { cause?: unknown }) {
    super(
      reason === 'none'
        ? `${url} requires a login: run ${cliCommand()} login ${url}`
        : `The login for ${url} has expired and could not be renewed: run ${cliCommand()} login ${url}`,
      options,
    );
    this.name = 'LoginRequiredError';
    this.url = url;
  }
}

/** Whether the stored access token has run out (or will within the margin), by the client's clock. */
export function hasExpired(login: StoredLogin, now: number = Date.now()): boolean {
  const lifetime = login.tokens?.expires_in;
  if (lifetime === undefined || login.tokensSavedAt === undefined) return false;
  const margin = Math.min(EXPIRY_MARGIN_MS, (lifetime * 1000) / 2);
  return now >= login.tokensSavedAt + lifetime * 1000 - margin;
}

/** Our fetch in the SDK's shape (which also takes a URL object and no init). */
export function sdkFetch(base: FetchLike): SdkFetchLike {
  return (url, init) => base(String(url), init ?? {});
}

/** Wraps `base` with the stored logins of `store`. */
export function loginFetch(store: FileLoginStore, base: FetchLike): FetchLike {
  return async (input, init) => {
    const provider = new StoredLoginProvider(store, input, { onLoginNeeded: () => new LoginRequiredError(input, 'expired') });
    const login = await provider.load();
    if (!login?.tokens?.access_token || !provider.redirectUrl) {
      const response = await base(input, init);
      if (response.status !== 401) return response;
      await response.body?.cancel();
      throw new LoginRequiredError(input, 'none');
    }
    try {
      if (hasExpired(login)) await renew(store, provider, login.tokens.access_token, base);
      const sent = provider.tokens()?.access_token ?? '';
      const response = await withBearer(base, sent)(input, init);
      if (response.status !== 401) return response;
      const challenge = extractWWWAuthenticateParams(response);
      await response.body?.cancel();
      await renew(store, provider, sent, base, challenge);
      const again = await withBearer(base, provider.tokens()?.access_token ?? '')(input, init);
      if (again.status !== 401) return again;
      await again.body?.cancel();
      throw new LoginRequiredError(input, 'expired');
    } catch (error) {
      if (error instanceof RenewalError) throw new LoginRequiredError(input, 'expired', { cause: error.cause });
      throw error;
    }
  };
}

/**
 * The kept login for `url`, renewed first when its access token has expired (by the
 * client's clock): what `async-mcp token` prints. Throws LoginRequiredError without one.
 */
export async function currentLogin(store: FileLoginStore, url: string, base: FetchLike): Promise<StoredLogin & Required<Pick<StoredLogin, 'tokens'>>> {
  const provider = new StoredLoginProvider(store, url, { onLoginNeeded: () => new LoginRequiredError(url, 'expired') });
  const login = await provider.load();
  if (!login?.tokens?.access_token || !provider.redirectUrl) throw new LoginRequiredError(url, 'none');
  if (!hasExpired(login)) return { ...login, tokens: login.tokens };
  try {
    await renew(store, provider, login.tokens.access_token, base);
  } catch (error) {
    if (error instanceof RenewalError) throw new LoginRequiredError(url, 'expired', { cause: error.cause });
    throw error;
  }
  const renewed = await store.get(url);
  if (!renewed?.tokens?.access_token) throw new LoginRequiredError(url, 'expired');
  return { ...renewed, tokens: renewed.tokens };
}

/** Whatever stopped a renewal (a refused refresh, an unreachable authorization server). */
class RenewalError extends Error {
  constructor(cause: unknown) {
    super('The login could not be renewed', { cause });
    this.name = 'RenewalError';
  }
}

/**
 * Renews the login unless another process did since `stale` (the access token this one has,
 * expired or refused) was read: under the lock, the kept login is read again first.
 */
async function renew(
  store: FileLoginStore,
  provider: StoredLoginProvider,
  stale: string,
  base: FetchLike,
  challenge: { resourceMetadataUrl?: URL; scope?: string } = {},
): Promise<void> {
  await store.whileLocked(provider.serverUrl, async () => {
    const current = await provider.load();
    if (current?.tokens && current.tokens.access_token !== stale && !hasExpired(current)) return;
    try {
      if (!current?.tokens?.refresh_token) throw new Error('The kept login has no refresh token');
      const result = await auth(provider, {
        serverUrl: current.serverUrl,
        ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
        ...(challenge.scope ? { scope: challenge.scope } : {}),
        fetchFn: sdkFetch(withTimeout(base, RENEWAL_TIMEOUT_MS)),
      });
      if (result !== 'AUTHORIZED') throw new Error(`The authorization server answered the renewal with ${result}`);
    } catch (error) {
      throw new RenewalError(error);
    }
  });
}

function withBearer(base: FetchLike, token: string): FetchLike {
  return (input, init) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    return base(input, { ...init, headers });
  };
}

function withTimeout(base: FetchLike, ms: number): FetchLike {
  return (input, init) => base(input, { ...init, signal: init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(ms)]) : AbortSignal.timeout(ms) });
}
