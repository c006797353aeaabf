/**
 * The fetch every command uses when no token or SigV4 is asked for: it sends the access
 * token of the login kept for the request's server, refreshes it when it has expired, or
 * when the server answers 401 (the SDK's `withOAuth`), and turns a 401 it cannot cure into
 * a LoginRequiredError that says which `async-mcp login` to run.
 */
import { auth, UnauthorizedError, withOAuth, type FetchLike as SdkFetchLike } from '@modelcontextprotocol/client';
import type { FetchLike } from '../mcp-connection.ts';
import type { FileLoginStore, StoredLogin } from '../stores/login-store.ts';
import { StoredLoginProvider } from './stored-login-provider.ts';

/** Refresh this long before the token's end, so a request does not arrive just after it. */
const EXPIRY_MARGIN_MS = 30_000;

/** The server wants a login the CLI does not have (any more). */
export class LoginRequiredError extends Error {
  readonly url: string;
  constructor(url: string, reason: 'none' | 'expired', options?: { cause?: unknown }) {
    super(
      reason === 'none'
        ? `${url} requires a login: run async-mcp login ${url}`
        : `The login for ${url} has expired and could not be renewed: run async-mcp login ${url}`,
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
      if (hasExpired(login)) await auth(provider, { serverUrl: login.serverUrl, fetchFn: sdkFetch(base) });
      return await withOAuth(provider, login.serverUrl)(sdkFetch(base))(input, init);
    } catch (error) {
      if (error instanceof LoginRequiredError) throw error;
      // withOAuth wraps whatever stopped the renewal, our own LoginRequiredError included.
      if (error instanceof UnauthorizedError) throw new LoginRequiredError(input, 'expired', { cause: error });
      throw error;
    }
  };
}
