/**
 * `$ASYNC_MCP_TOKEN` is meant for the servers the user has no login for: a server with its
 * own `async-mcp login` gets that login's token, never the environment's (which was issued
 * for, and is a secret of, another server). `--token` still wins for the command it is
 * given to. The real CLI process against two fake MCP servers on loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FileLoginStore, loginKey } from '../../client/stores/login-store.ts';
import { cliEnv, runCli } from './support/cli-process.ts';

/** A fake MCP server that records the bearer tokens it was sent and lists one tool to any. */
async function fakeServer(seen: string[]): Promise<{ server: Server; url: string }> {
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push(req.headers.authorization ?? '');
    const message = JSON.parse(body) as { id?: string | number; method: string };
    const answer = (result: unknown) =>
      void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    if (message.id === undefined) return void res.writeHead(202).end();
    if (message.method === 'initialize')
      return answer({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } });
    if (message.method === 'tools/list') return answer({ tools: [{ name: 'listed_tool', inputSchema: { type: 'object' } }] });
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

const seenByA: string[] = [];
const seenByB: string[] = [];
let a: Awaited<ReturnType<typeof fakeServer>>;
let b: Awaited<ReturnType<typeof fakeServer>>;
let stateDir: string;

beforeAll(async () => {
  a = await fakeServer(seenByA);
  b = await fakeServer(seenByB);
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-env-token-'));
  // B has its own login (good for an hour); A has none.
  await new FileLoginStore(stateDir).put({
    resource: loginKey(b.url),
    serverUrl: b.url,
    client: { client_id: 'cli-b', redirect_uris: ['http://127.0.0.1:53100/callback'], token_endpoint_auth_method: 'none' },
    tokens: { access_token: 'token-of-b-login', refresh_token: 'refresh-of-b', token_type: 'Bearer', expires_in: 3600 },
    tokensSavedAt: Date.now(),
  });
});
afterAll(async () => {
  for (const { server } of [a, b]) await new Promise((done) => server.close(done));
  await rm(stateDir, { recursive: true, force: true });
});
beforeEach(() => {
  seenByA.length = 0;
  seenByB.length = 0;
});

describe('$ASYNC_MCP_TOKEN and stored logins', () => {
  it('with a stored login for B and ASYNC_MCP_TOKEN set, B receives its own token, never the environment one', async () => {
    const run = await runCli(['tools', b.url], cliEnv(stateDir, { ASYNC_MCP_TOKEN: 'token-meant-for-a' }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('listed_tool');
    expect(seenByB.length).toBeGreaterThan(0);
    expect(new Set(seenByB)).toEqual(new Set(['Bearer token-of-b-login']));
  });

  it('a server without a stored login still gets the environment token', async () => {
    const run = await runCli(['tools', a.url], cliEnv(stateDir, { ASYNC_MCP_TOKEN: 'token-meant-for-a' }));
    expect(run.code, run.stderr).toBe(0);
    expect(new Set(seenByA)).toEqual(new Set(['Bearer token-meant-for-a']));
  });

  it('--token wins over the stored login for the command it is given to', async () => {
    const run = await runCli(['tools', b.url, '--token', 'given-on-the-command-line'], cliEnv(stateDir, { ASYNC_MCP_TOKEN: 'token-meant-for-a' }));
    expect(run.code, run.stderr).toBe(0);
    expect(new Set(seenByB)).toEqual(new Set(['Bearer given-on-the-command-line']));
  });
});
