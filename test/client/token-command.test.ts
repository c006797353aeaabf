/**
 * `async-mcp token <url>`: the kept login's access token for scripts (curl, another client),
 * renewed first when it has expired, alone on stdout, with a warning on stderr that it is a
 * secret. The real CLI process against a fake token endpoint on loopback.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseCli, USAGE, UsageError } from '../../client/cli-args.ts';
import { FileLoginStore, loginKey, type StoredLogin } from '../../client/stores/login-store.ts';
import { cliEnv, lastJson, runCli } from './support/cli-process.ts';

let server: Server;
let origin: string;
let url: string;
let stateDir: string;
let store: FileLoginStore;
const grant = { refresh: 'refresh-0', issued: 0 };

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const form = new URLSearchParams(body);
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/token' || form.get('refresh_token') !== grant.refresh) {
      return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
    }
    grant.issued++;
    grant.refresh = `refresh-${grant.issued}`;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(
        JSON.stringify({ access_token: `access-${grant.issued}`, refresh_token: grant.refresh, token_type: 'Bearer', expires_in: 3600, scope: 'mcp:tools' }),
      );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  url = `${origin}/mcp`;
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-token-command-'));
  store = new FileLoginStore(stateDir);
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
  await rm(stateDir, { recursive: true, force: true });
});
beforeEach(async () => {
  Object.assign(grant, { refresh: 'refresh-0', issued: 0 });
  await store.delete(url);
});

function keptLogin(savedAt: number): StoredLogin {
  return {
    resource: loginKey(url),
    serverUrl: url,
    client: {
      client_id: 'cli-1',
      redirect_uris: ['http://127.0.0.1:53100/callback'],
      token_endpoint_auth_method: 'none',
      issuer: origin,
    } as StoredLogin['client'],
    tokens: {
      access_token: 'access-0',
      refresh_token: 'refresh-0',
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'mcp:tools',
      issuer: origin,
    } as StoredLogin['tokens'],
    tokensSavedAt: savedAt,
    discovery: {
      authorizationServerUrl: origin,
      resourceMetadata: { resource: url, authorization_servers: [origin] },
      authorizationServerMetadata: {
        issuer: origin,
        authorization_endpoint: `${origin}/auth`,
        token_endpoint: `${origin}/token`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
      },
    } as StoredLogin['discovery'],
  };
}

describe('async-mcp token <url>', () => {
  it('prints the kept access token alone on stdout, and warns on stderr that it is a secret', async () => {
    await store.put(keptLogin(Date.now()));
    const run = await runCli(['token', url], cliEnv(stateDir));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('access-0\n');
    expect(run.stderr).toMatch(/act as you on \S+ for about \d+ min/);
    expect(run.stderr).toContain('Keep it out of logs');
    expect(run.stderr).not.toContain('access-0');
    expect(grant.issued).toBe(0);
  });

  it('renews an expired token first, and keeps the renewed login in a file only the user can read', async () => {
    await store.put(keptLogin(Date.now() - 3_700_000));
    const run = await runCli(['token', url], cliEnv(stateDir));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('access-1\n');
    expect((await store.get(url))?.tokens).toMatchObject({ access_token: 'access-1', refresh_token: 'refresh-1' });
    expect((await stat(store.fileOf(url))).mode & 0o777).toBe(0o600);
    expect((await stat(store.dir)).mode & 0o777).toBe(0o700);
  });

  it('--json prints the token with its type, end and scope', async () => {
    const savedAt = Date.now();
    await store.put(keptLogin(savedAt));
    const run = await runCli(['token', url, '--json'], cliEnv(stateDir));
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run)).toEqual({
      url,
      accessToken: 'access-0',
      tokenType: 'Bearer',
      expiresAt: new Date(savedAt + 3_600_000).toISOString(),
      scope: 'mcp:tools',
    });
  });

  it('without a login it says which login to run, and prints nothing on stdout', async () => {
    const run = await runCli(['token', url], cliEnv(stateDir));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`requires a login: run npm run cli -- login ${url}`);
  });

  it('takes one URL, and no --token, --sigv4 or --region; the usage names it', () => {
    expect(parseCli(['token', 'http://127.0.0.1:3000/mcp']).command).toEqual({ name: 'token', url: 'http://127.0.0.1:3000/mcp' });
    for (const argv of [['token'], ['token', 'not a url'], ['token', url, '--token', 't'], ['token', url, '--sigv4']])
      expect(() => parseCli(argv)).toThrow(UsageError);
    expect(USAGE).toContain('async-mcp token <url>');
  });
});
