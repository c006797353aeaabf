/**
 * How the client authenticates: a bearer token, AWS SigV4, the login `async-mcp login` kept
 * for the server, or nothing. Secrets never go into handles or logs.
 *
 * The order, first that applies: SigV4 when asked for; the token passed (`--token`); the
 * server's own stored login; `$ASYNC_MCP_TOKEN`; nothing. A stored login wins over the
 * environment token because that token was issued for some other server: sending it to
 * every server would hand one server's secret to the next.
 */
import type { CallHandle } from './call-handle.ts';
import { cliCommand } from './cli-command.ts';
import { loginFetch } from './login/login-fetch.ts';
import type { FetchLike } from './mcp-connection.ts';
import { sigV4Fetch, type SigV4Options } from './sigv4-signer.ts';
import type { FileLoginStore } from './stores/login-store.ts';

/** The environment variable a bearer token is read from when no token is passed. */
export const TOKEN_ENV = 'ASYNC_MCP_TOKEN';

export interface AuthOptions {
  /** A bearer token, sent to every server. @default process.env.ASYNC_MCP_TOKEN, for servers without a stored login */
  token?: string;
  /** Sign every request with SigV4 (IAM-authenticated Function URLs); `true` for the defaults. */
  sigv4?: boolean | SigV4Options;
  /** Logins kept by `async-mcp login`: a server's own wins over `$ASYNC_MCP_TOKEN`, not over `token`. @default none */
  logins?: FileLoginStore;
}

export interface Authenticated {
  fetch: FetchLike;
  /** What `url` (or the handle's) is sent: `undefined` for a stored login or nothing. */
  kind: CallHandle['auth'];
}

/**
 * The fetch to use. For a call started earlier, a handle that was signed is signed again
 * (no secret is stored; credentials come from the provider chain), and one that used a
 * bearer token needs the token again. `url` is the server the fetch is for, when known, to
 * say which kind of credentials it gets.
 */
export function authenticate(
  auth: AuthOptions = {},
  base: FetchLike = (input, init) => fetch(input, init),
  handle?: CallHandle,
  url: string | undefined = handle?.url,
): Authenticated {
  const sigv4 = auth.sigv4 ?? (handle?.auth === 'sigv4' ? true : undefined);
  if (sigv4) return { fetch: sigV4Fetch(sigv4 === true ? {} : sigv4, base), kind: 'sigv4' };
  if (auth.token) return { fetch: withBearer(auth.token, base), kind: 'bearer' };
  const { logins } = auth;
  const environmentToken = process.env[TOKEN_ENV] || undefined;
  const hasLogin = url !== undefined && logins?.has(url) === true;
  if (!environmentToken && handle?.auth === 'bearer' && !hasLogin) {
    throw new Error(
      `Call ${handle.id} was started with a bearer token: pass the same token (or set ${TOKEN_ENV}), or run ${cliCommand()} login ${handle.url}, to reach it`,
    );
  }
  // A login is found per request URL, so one fetch serves whichever server it is sent to.
  const withLogin = logins ? loginFetch(logins, base) : undefined;
  const withToken = environmentToken ? withBearer(environmentToken, base) : undefined;
  const chosen: FetchLike = (input, init) => {
    if (withLogin && (!withToken || logins?.has(input))) return withLogin(input, init);
    return (withToken ?? base)(input, init);
  };
  return { fetch: chosen, kind: withToken && !hasLogin ? 'bearer' : undefined };
}

function withBearer(token: string, base: FetchLike): FetchLike {
  return (input, init) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    return base(input, { ...init, headers });
  };
}
