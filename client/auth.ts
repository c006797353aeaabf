/**
 * How the client authenticates: a bearer token, AWS SigV4, the login `async-mcp login` kept
 * for the server, or nothing. Secrets never go into handles or logs.
 */
import type { CallHandle } from './call-handle.ts';
import { loginFetch } from './login/login-fetch.ts';
import type { FetchLike } from './mcp-connection.ts';
import { sigV4Fetch, type SigV4Options } from './sigv4-signer.ts';
import type { FileLoginStore } from './stores/login-store.ts';

/** The environment variable a bearer token is read from when no token is passed. */
export const TOKEN_ENV = 'ASYNC_MCP_TOKEN';

export interface AuthOptions {
  /** A bearer token. @default process.env.ASYNC_MCP_TOKEN */
  token?: string;
  /** Sign every request with SigV4 (IAM-authenticated Function URLs); `true` for the defaults. */
  sigv4?: boolean | SigV4Options;
  /** Logins kept by `async-mcp login`, used when neither a token nor SigV4 is given. @default none */
  logins?: FileLoginStore;
}

export interface Authenticated {
  fetch: FetchLike;
  kind: CallHandle['auth'];
}

/**
 * The fetch to use. For a call started earlier, a handle that was signed is signed again
 * (no secret is stored; credentials come from the provider chain), and one that used a
 * bearer token needs the token again.
 */
export function authenticate(auth: AuthOptions = {}, base: FetchLike = (input, init) => fetch(input, init), handle?: CallHandle): Authenticated {
  const sigv4 = auth.sigv4 ?? (handle?.auth === 'sigv4' ? true : undefined);
  if (sigv4) return { fetch: sigV4Fetch(sigv4 === true ? {} : sigv4, base), kind: 'sigv4' };
  const token = auth.token ?? process.env[TOKEN_ENV];
  if (!token) {
    if (handle?.auth === 'bearer' && !auth.logins?.has(handle.url)) {
      throw new Error(`Call ${handle.id} was started with a bearer token: pass the same token (or set ${TOKEN_ENV}), or run async-mcp login ${handle.url}, to reach it`);
    }
    // A login is found per request URL, so one fetch serves whichever server it is sent to.
    return { fetch: auth.logins ? loginFetch(auth.logins, base) : base, kind: undefined };
  }
  const fetchWithToken: FetchLike = (input, init) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    return base(input, { ...init, headers });
  };
  return { fetch: fetchWithToken, kind: 'bearer' };
}
