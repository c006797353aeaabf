/**
 * Two `async-mcp` processes renewing one login at once must not log the user out. Servers
 * with refresh-token rotation and reuse detection (oidc-provider, as `--oauth-dev` runs it,
 * Auth0, Okta) revoke the whole grant when a rotated refresh token comes back: if both
 * processes refresh with the token they read, the second use revokes the first's new
 * tokens too. Two real CLI processes against a fake MCP server and token endpoint on
 * loopback that behave that way.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FileLoginStore, loginKey, type StoredLogin } from '../../client/stores/login-store.ts';
import { cliEnv, runCli } from './support/cli-process.ts';

/**
 * How long the token endpoint holds its answer to a refresh while no second refresh has come:
 * it lets two processes that both refresh overlap, whatever their start-up times. A client that
 * refreshes once just waits this long; nothing asserts on time.
 */
const OVERLAP_WINDOW_MS = 3000;

let server: Server;
let origin: string;
let url: string;
let work: string;

/** The grant as the authorization server keeps it: one live refresh token, the ones it rotated out, and whether it was revoked. */
const grant = {
  access: 'access-0',
  refresh: 'refresh-0',
  rotated: new Set<string>(),
  revoked: false,
  issued: 0,
  refreshes: 0,
  reuses: 0,
};
let releaseHeld: (() => void) | undefined;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
      void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
    if (path === '/token') return refresh(new URLSearchParams(body), json);
    if (path === '/mcp') {
      if (grant.revoked || req.headers.authorization !== `Bearer ${grant.access}`) {
        return json(401, { error: 'invalid_token' }, { 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` });
      }
      const message = JSON.parse(body) as { id?: string | number; method: string };
      if (message.id === undefined) return void res.writeHead(202).end();
      if (message.method === 'initialize') {
        return json(200, {
          jsonrpc: '2.0',
          id: message.id,
          result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } },
        });
      }
      if (message.method === 'tools/list') {
        return json(200, { jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'renewal_probe', inputSchema: { type: 'object' } }] } });
      }
      return json(200, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  url = `${origin}/mcp`;
  work = await mkdtemp(join(tmpdir(), 'async-mcp-concurrent-renewal-'));
});
afterAll(async () => {
  releaseHeld?.();
  await new Promise((done) => server.close(done));
  await rm(work, { recursive: true, force: true });
});
beforeEach(() => {
  Object.assign(grant, { access: 'access-0', refresh: 'refresh-0', rotated: new Set<string>(), revoked: false, issued: 0, refreshes: 0, reuses: 0 });
});

/** Rotation with reuse detection (OAuth 2.0 Security BCP §4.14.2): a rotated-out refresh token revokes the grant. */
async function refresh(form: URLSearchParams, json: (status: number, value: unknown) => void): Promise<void> {
  grant.refreshes++;
  const token = form.get('refresh_token') ?? '';
  if (form.get('grant_type') !== 'refresh_token' || form.get('client_id') !== 'cli-1') return json(400, { error: 'invalid_request' });
  if (grant.rotated.has(token)) {
    grant.reuses++;
    grant.revoked = true;
    releaseHeld?.();
    return json(400, { error: 'invalid_grant', error_description: 'refresh token reused: grant revoked' });
  }
  if (grant.revoked || token !== grant.refresh) return json(400, { error: 'invalid_grant' });
  grant.rotated.add(token);
  grant.issued++;
  grant.access = `access-${grant.issued}`;
  grant.refresh = `refresh-${grant.issued}`;
  const answer = { access_token: grant.access, refresh_token: grant.refresh, token_type: 'Bearer', expires_in: 3600 };
  if (grant.refreshes === 1) {
    // Held until another refresh comes, or the window closes.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, OVERLAP_WINDOW_MS);
      releaseHeld = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    releaseHeld = undefined;
  }
  json(200, answer);
}

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

describe('two processes renewing one login at once', () => {
  it('an expired login renewed by two CLI processes at once, against a server that revokes the grant on reuse: both commands go on, and the kept login still works', async () => {
    const stateDir = join(work, 'by-expiry');
    const store = new FileLoginStore(stateDir);
    await store.put(keptLogin({ tokensSavedAt: Date.now() - 3_700_000 }));
    const env = cliEnv(stateDir);

    const [first, second] = await Promise.all([runCli(['tools', url], env), runCli(['tools', url], env)]);
    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    expect(first.stdout).toContain('renewal_probe');
    expect(second.stdout).toContain('renewal_probe');
    expect(grant).toMatchObject({ revoked: false, reuses: 0 });

    // The kept login holds the grant's live tokens, and a later command needs no new login.
    expect((await store.get(url))?.tokens).toMatchObject({ access_token: grant.access, refresh_token: grant.refresh });
    const later = await runCli(['tools', url], env);
    expect(later.code, later.stderr).toBe(0);
    // The renewal's lock is gone with it.
    expect((await readdir(store.dir)).filter((name) => !name.endsWith('.json'))).toEqual([]);
  });

  it('a token the server refuses (401) renewed by two CLI processes at once: both go on, and the grant is not revoked', async () => {
    const stateDir = join(work, 'on-401');
    const store = new FileLoginStore(stateDir);
    // Good by the client's clock, but the server no longer takes it.
    grant.access = 'access-the-server-forgot';
    await store.put(keptLogin());
    const env = cliEnv(stateDir);

    const [first, second] = await Promise.all([runCli(['tools', url], env), runCli(['tools', url], env)]);
    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    expect(grant).toMatchObject({ revoked: false, reuses: 0 });
    expect((await store.get(url))?.tokens).toMatchObject({ access_token: grant.access, refresh_token: grant.refresh });
  });
});
