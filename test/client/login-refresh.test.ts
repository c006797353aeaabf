/**
 * A kept login renews itself: by its expiry before a request, or when the server answers
 * 401; a refresh the authorization server refuses, or no login at all, ends in an error
 * that names the `async-mcp login` to run. Against a small resource and token endpoint on
 * loopback, with the discovery results the login kept.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { hasExpired, LoginRequiredError, loginFetch } from '../../client/login/login-fetch.ts';
import { browserCommand } from '../../client/login/open-browser.ts';
import { FileLoginStore, loginKey, type StoredLogin } from '../../client/stores/login-store.ts';

let server: Server;
let origin: string;
let url: string;
let stateDir: string;
let store: FileLoginStore;
/** What the endpoints accept now, and what they saw. */
const state: { access: string; refresh: string; issued: number; refreshes: number; refusedRequests: number; onRefusedRefresh?: () => Promise<void> } = {
  access: 'access-0',
  refresh: 'refresh-0',
  issued: 0,
  refreshes: 0,
  refusedRequests: 0,
};

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/token') {
      const form = new URLSearchParams(body);
      state.refreshes++;
      if (form.get('grant_type') !== 'refresh_token' || form.get('refresh_token') !== state.refresh || form.get('client_id') !== 'cli-1') {
        await state.onRefusedRefresh?.();
        return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant' }));
      }
      state.issued++;
      state.access = `access-${state.issued}`;
      state.refresh = `refresh-${state.issued}`;
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: state.access, refresh_token: state.refresh, token_type: 'Bearer', expires_in: 3600 }));
    }
    if (path === '/mcp') {
      if (req.headers.authorization !== `Bearer ${state.access}`) {
        state.refusedRequests++;
        return void res
          .writeHead(401, {
            'content-type': 'application/json',
            'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
          })
          .end(JSON.stringify({ error: 'invalid_token' }));
      }
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  url = `${origin}/mcp`;
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-login-refresh-'));
  store = new FileLoginStore(stateDir);
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
  await rm(stateDir, { recursive: true, force: true });
});
beforeEach(() => {
  Object.assign(state, { access: 'access-0', refresh: 'refresh-0', issued: 0, refreshes: 0, refusedRequests: 0, onRefusedRefresh: undefined });
});

function keptLogin(overrides: Partial<StoredLogin> = {}): StoredLogin {
  return {
    resource: loginKey(url),
    serverUrl: url,
    client: {
      client_id: 'cli-1',
      redirect_uris: ['http://127.0.0.1:53100/callback'],
      token_endpoint_auth_method: 'none',
      issuer: origin,
    } as StoredLogin['client'],
    tokens: { access_token: 'access-0', refresh_token: 'refresh-0', token_type: 'Bearer', expires_in: 3600, issuer: origin } as StoredLogin['tokens'],
    tokensSavedAt: Date.now(),
    discovery: {
      authorizationServerUrl: origin,
      resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
      resourceMetadata: { resource: url, authorization_servers: [origin] },
      authorizationServerMetadata: {
        issuer: origin,
        authorization_endpoint: `${origin}/auth`,
        token_endpoint: `${origin}/token`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      },
    } as StoredLogin['discovery'],
    ...overrides,
  };
}

/** Tokens as the SDK stores them: stamped with their issuer (SEP-2352), so reading them back warns of nothing. */
const stamped = (tokens: Omit<NonNullable<StoredLogin['tokens']>, 'issuer'>) => ({ ...tokens, issuer: origin }) as StoredLogin['tokens'];

/** The SDK's console.warn notices from here to the end of the test, kept off the output: read them to assert them. */
function sdkNotices(): () => string[] {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  onTestFinished(() => warn.mockRestore());
  return () => warn.mock.calls.map((args) => args.map(String).join(' '));
}

const send = (fetch: ReturnType<typeof loginFetch>) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
const base = (input: string, init: RequestInit) => fetch(input, init);

describe('a kept login renews itself', () => {
  it('counts a token as expired from when it was saved plus expires_in, a little early', () => {
    const login = keptLogin({ tokensSavedAt: 1_000_000 });
    expect(hasExpired(login, 1_000_000 + 3_500_000)).toBe(false);
    expect(hasExpired(login, 1_000_000 + 3_580_000)).toBe(true);
    expect(hasExpired({ ...login, tokens: { access_token: 'a', token_type: 'Bearer' } }, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('a token whose lifetime has passed is refreshed before the request, which the server then accepts at once', async () => {
    await store.put(keptLogin({ tokensSavedAt: Date.now() - 3_700_000 }));
    const response = await send(loginFetch(store, base));
    expect(response.status).toBe(200);
    expect(state).toMatchObject({ refreshes: 1, refusedRequests: 0 });
    const kept = await store.get(url);
    expect(kept?.tokens).toMatchObject({ access_token: 'access-1', refresh_token: 'refresh-1' });
    expect(kept!.tokensSavedAt).toBeGreaterThan(Date.now() - 10_000);
  });

  it('a 401 to a token the client still thought good refreshes it and sends the request again', async () => {
    await store.put(keptLogin({ tokens: stamped({ access_token: 'revoked', refresh_token: 'refresh-0', token_type: 'Bearer', expires_in: 3600 }) }));
    const response = await send(loginFetch(store, base));
    expect(response.status).toBe(200);
    expect(state).toMatchObject({ refreshes: 1, refusedRequests: 1 });
    expect((await store.get(url))?.tokens?.access_token).toBe('access-1');
  });

  it('a refresh the authorization server refuses ends in LoginRequiredError naming the login to run, and the refused tokens are forgotten', async () => {
    await store.put(
      keptLogin({
        tokensSavedAt: Date.now() - 3_700_000,
        tokens: stamped({ access_token: 'old', refresh_token: 'refresh-revoked', token_type: 'Bearer', expires_in: 3600 }),
      }),
    );
    const notices = sdkNotices();
    const failure = await send(loginFetch(store, base)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LoginRequiredError);
    expect((failure as Error).message).toBe(`The login for ${url} has expired and could not be renewed: run async-mcp login ${url}`);
    expect((await store.get(url))?.tokens).toBeUndefined();
    expect(notices()).toEqual([expect.stringMatching(/^\[mcp-sdk\] OAuth "invalid_grant" — invalidating the stored tokens/)]);
  });

  it('a refresh that lost the race to another process, which rotated the refresh token, goes on with the tokens that process kept', async () => {
    const expired = Date.now() - 3_700_000;
    await store.put(keptLogin({ tokensSavedAt: expired }));
    // The other process refreshed first: the server now knows only its refresh token, and the file holds it.
    Object.assign(state, { access: 'access-5', refresh: 'refresh-5', issued: 5 });
    state.onRefusedRefresh = async () => {
      state.onRefusedRefresh = undefined;
      await store.put(
        keptLogin({
          tokensSavedAt: expired,
          tokens: stamped({ access_token: 'access-5', refresh_token: 'refresh-5', token_type: 'Bearer', expires_in: 3600 }),
        }),
      );
    };
    const notices = sdkNotices();
    const response = await send(loginFetch(store, base));
    expect(response.status).toBe(200);
    expect((await store.get(url))?.tokens).toMatchObject({ access_token: 'access-6', refresh_token: 'refresh-6' });
    // The refused refresh token is the SDK's invalid_grant, which it names as it recovers.
    expect(notices()).toEqual([expect.stringMatching(/^\[mcp-sdk\] OAuth "invalid_grant" — invalidating the stored tokens/)]);
  });

  it('without a kept login, a 401 is LoginRequiredError, and any other answer passes through', async () => {
    await store.delete(url);
    const failure = await send(loginFetch(store, base)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LoginRequiredError);
    expect((failure as Error).message).toBe(`${url} requires a login: run async-mcp login ${url}`);
    const notFound = await loginFetch(store, base)(`${origin}/nothing`, { method: 'GET' });
    expect(notFound.status).toBe(404);
  });
});

describe('which browser login starts', () => {
  const at = 'http://127.0.0.1:1/auth?x=1';
  it('$BROWSER wins; %s stands for the URL, else the URL is appended', () => {
    expect(browserCommand(at, { BROWSER: 'firefox --new-window' }, 'linux')).toEqual(['firefox', '--new-window', at]);
    expect(browserCommand(at, { BROWSER: 'my-open --url=%s' }, 'darwin')).toEqual(['my-open', `--url=${at}`]);
  });
  it('the platform opener otherwise, and none on a Linux machine without a display', () => {
    expect(browserCommand(at, {}, 'darwin')).toEqual(['open', at]);
    expect(browserCommand(at, { DISPLAY: ':0' }, 'linux')).toEqual(['xdg-open', at]);
    expect(browserCommand(at, {}, 'linux')).toBeUndefined();
  });
});
