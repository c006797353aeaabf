/**
 * The MCP authorization flow end to end, as `npm start -- --oauth-dev` serves it: the
 * official SDK's OAuth client discovers the authorization server from the 401, registers
 * itself (RFC 7591), signs in through the development pages (authorization code with PKCE
 * S256 and a resource indicator), exchanges the code and calls tools with the JWT it got.
 */
import { auth, Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OAuthConfigError } from '../../lambdas/auth/oauth-config.ts';
import { DEV_MCP_SCOPE, startDevAuthorizationServer } from '../../local/oauth/dev-authorization-server.ts';
import { startLocalStackWithDevAuthorization, type LocalStackWithDevAuthorization } from '../../local/oauth/local-stack-with-dev-authorization.ts';
import { expectedStats } from '../support/expected-stats.ts';
import { captureLogs } from '../support/log-capture.ts';
import { MemoryOAuthProvider, signInWithFetch } from '../support/oauth-dev-client.ts';
import { MODERN_VERSION, modernDispatch, modernRequest } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

const OTHER_RESOURCE = 'https://other.example/mcp';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let stack: LocalStackWithDevAuthorization;

beforeAll(async () => {
  stack = await startLocalStackWithDevAuthorization(
    { toolsDir: 'state-machines', port: 0, waitTimeScale: 0.01 },
    { announce: () => undefined, extraResources: [OTHER_RESOURCE] },
  );
});
afterAll(async () => {
  await stack?.close();
});

const bearer = (provider: MemoryOAuthProvider) => ({ authorization: `Bearer ${provider.savedTokens!.access_token}` });

/** A v2 Client signed in as `user`: the first connect meets the 401 and sends the user to sign in; the second one works. */
async function signIn(user: string) {
  const provider = new MemoryOAuthProvider(`e2e ${user}`);
  const connect = async () => {
    const client = new Client({ name: `e2e-${user}`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const transport = new StreamableHTTPClientTransport(stack.url, { authProvider: provider });
    await client.connect(transport);
    return { client, transport };
  };
  const transport = new StreamableHTTPClientTransport(stack.url, { authProvider: provider });
  const first = new Client({ name: `e2e-${user}`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrls).toHaveLength(1);
  const pages = await signInWithFetch(provider.authorizationUrls[0]!, user);
  expect(pages.callback.get('state')).toBe(provider.expectedState);
  await transport.finishAuth(pages.callback);
  const { client } = await connect();
  return { client, provider, pages };
}

describe('npm start -- --oauth-dev with the SDK OAuth client', () => {
  let alice: Awaited<ReturnType<typeof signIn>>;
  let aliceTaskId: string;

  it('alice signs in (discovery from the 401, registration, PKCE S256, resource indicator) and gets a JWT for this server with the MCP scope', async () => {
    alice = await signIn('alice');
    const authorization = alice.provider.authorizationUrls[0]!;
    expect(authorization.origin).toBe(stack.authorizationServer.issuer);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('resource')).toBe(stack.url.href);
    expect(authorization.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining([DEV_MCP_SCOPE, 'offline_access']));
    expect(alice.pages.login).toContain('Development only');
    expect(alice.pages.consent).toContain(DEV_MCP_SCOPE);

    const claims = decodeJwt(alice.provider.savedTokens!.access_token);
    expect(claims).toMatchObject({ iss: stack.authorizationServer.issuer, sub: 'alice', aud: stack.url.href });
    expect(String(claims.scope).split(' ')).toContain(DEV_MCP_SCOPE);
    expect(alice.provider.savedTokens!.refresh_token).toBeTruthy();
    expect((await alice.client.listTools()).tools.map((tool) => tool.name)).toContain('analyze_dataset');
  });

  it('alice starts analyze_dataset as a task and gets its result', async () => {
    const session = createTaskSessionFromClient(alice.client, {
      endpointId: 'e2e-oauth-dev',
      // The session's own requests carry the token the OAuth client holds at the time.
      rawDispatch: ((request: unknown) => modernDispatch(stack.url, bearer(alice.provider))(request)) as never,
      v2RequestFraming: { protocolVersion: MODERN_VERSION, clientInfo: { name: 'e2e-alice', version: '1.0.0' }, clientCapabilities: {} },
    });
    try {
      const execution = await session.callTool('analyze_dataset', { rows: 5000, seed: 7 });
      expect(execution.kind).toBe('task');
      aliceTaskId = execution.handle!.taskId as string;
      const { outcome } = await execution.settle();
      const result = resultFromTaskOutcome(outcome) as { structuredContent: Record<string, number> };
      expect(result.structuredContent.count).toBe(expectedStats(5000, 7).count);
      expect(result.structuredContent.mean).toBeCloseTo(expectedStats(5000, 7).mean, 9);
    } finally {
      await session.close();
    }
  });

  it('bob signs in as himself and cannot see alice’s task', async () => {
    const bob = await signIn('bob');
    try {
      expect(decodeJwt(bob.provider.savedTokens!.access_token).sub).toBe('bob');
      const asBob = await modernRequest(stack.url, 'tasks/get', { taskId: aliceTaskId }, { capabilities: TASKS, headers: bearer(bob.provider) });
      expect(rpcError(asBob).code).toBe(-32602);
      const asAlice = await modernRequest(stack.url, 'tasks/get', { taskId: aliceTaskId }, { capabilities: TASKS, headers: bearer(alice.provider) });
      expect(ok(asAlice).status).toBe('completed');
    } finally {
      await bob.client.close();
    }
  });

  it('an expired access token is refreshed with the refresh token, without a new sign-in', async () => {
    const before = alice.provider.savedTokens!.access_token;
    const expiresAt = decodeJwt(before).exp! * 1000;
    // Both servers run in this process: moving the clock past the token's expiry (and the 60 s skew) ages it for both.
    const logs = captureLogs('token rejected');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(expiresAt + 120_000);
      const stale = await modernRequest(stack.url, 'tools/list', {}, { headers: bearer(alice.provider) });
      expect(stale.status).toBe(401);
      expect(stale.headers.get('www-authenticate')).toContain('error="invalid_token"');

      const { tools } = await alice.client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('analyze_dataset');
    } finally {
      vi.useRealTimers();
    }
    expect(alice.provider.savedTokens!.access_token).not.toBe(before);
    expect(decodeJwt(alice.provider.savedTokens!.access_token).sub).toBe('alice');
    expect(alice.provider.authorizationUrls).toHaveLength(1);
    // The stale token was refused (and logged so) before the SDK refreshed it: by our request, then by the client's.
    expect(logs.entries.length).toBeGreaterThan(0);
    for (const entry of logs.entries) expect(entry).toMatchObject({ level: 'WARN', reason: expect.any(String) });
    await alice.client.close();
  });

  it('a token without the MCP scope gets 403 insufficient_scope naming the scope and the metadata, and the SDK steps up to it with a new sign-in', async () => {
    const provider = new MemoryOAuthProvider('e2e step-up');
    expect(await auth(provider, { serverUrl: stack.url, scope: 'openid offline_access' })).toBe('REDIRECT');
    const first = await signInWithFetch(provider.authorizationUrls[0]!, 'carol');
    expect(await auth(provider, { serverUrl: stack.url, authorizationCode: first.callback.get('code')!, iss: first.callback.get('iss')! })).toBe('AUTHORIZED');
    expect(String(decodeJwt(provider.savedTokens!.access_token).scope ?? '').split(' ')).not.toContain(DEV_MCP_SCOPE);

    const logs = captureLogs('token rejected');
    const refused = await modernRequest(stack.url, 'tools/list', {}, { headers: bearer(provider) });
    expect(refused.status).toBe(403);
    const challenge = refused.headers.get('www-authenticate')!;
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain(`scope="${DEV_MCP_SCOPE}"`);
    expect(challenge).toContain(`resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', stack.url).href}"`);

    // MCP authorization, "Step-Up Authorization Flow": the client asks again for the scopes the challenge names.
    const transport = new StreamableHTTPClientTransport(stack.url, { authProvider: provider });
    const client = new Client({ name: 'e2e-step-up', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrls).toHaveLength(2);
    expect(provider.authorizationUrls[1]!.searchParams.get('scope')?.split(' ')).toContain(DEV_MCP_SCOPE);
    // Each refusal of the scope-less token (ours, then the SDK's first connect) is logged, naming the scope it lacks.
    expect(logs.entries.length).toBeGreaterThan(0);
    for (const entry of logs.entries) expect(entry).toMatchObject({ level: 'WARN', reason: 'insufficient scope', missing: DEV_MCP_SCOPE });
    const second = await signInWithFetch(provider.authorizationUrls[1]!, 'carol');
    await transport.finishAuth(second.callback);
    const again = new Client({ name: 'e2e-step-up', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await again.connect(new StreamableHTTPClientTransport(stack.url, { authProvider: provider }));
    expect((await again.listTools()).tools.length).toBeGreaterThan(0);
    await again.close();
  });

  it('a token the same authorization server issued for another resource (wrong audience) gets 401', async () => {
    const provider = new MemoryOAuthProvider('e2e elsewhere', { resource: OTHER_RESOURCE });
    expect(await auth(provider, { serverUrl: stack.url })).toBe('REDIRECT');
    const authorization = provider.authorizationUrls[0]!;
    expect(authorization.searchParams.get('resource')).toBe(OTHER_RESOURCE);
    const pages = await signInWithFetch(authorization, 'alice');
    expect(await auth(provider, { serverUrl: stack.url, authorizationCode: pages.callback.get('code')!, iss: pages.callback.get('iss')! })).toBe('AUTHORIZED');
    expect(decodeJwt(provider.savedTokens!.access_token)).toMatchObject({ sub: 'alice', aud: OTHER_RESOURCE });

    const logs = captureLogs('token rejected');
    const response = await modernRequest(stack.url, 'tools/list', {}, { headers: bearer(provider) });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(logs.entries).toEqual([expect.objectContaining({ level: 'WARN', reason: expect.any(String) })]);
  });
});

describe('the development authorization server itself', () => {
  it('listens on 127.0.0.1 only, and with a keys file keeps its signing key across restarts (the file readable by its owner only)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'async-mcp-oauth-dev-'));
    try {
      const keysFile = join(dir, 'oauth', 'keys.json');
      const jwksOf = async () => {
        const server = await startDevAuthorizationServer({ keysFile });
        try {
          expect(new URL(server.issuer).hostname).toBe('127.0.0.1');
          return ((await (await fetch(`${server.issuer}/jwks`)).json()) as { keys: Array<{ kid: string; d?: string }> }).keys;
        } finally {
          await server.close();
        }
      };
      const first = await jwksOf();
      expect(first).toHaveLength(1);
      expect(first[0]).not.toHaveProperty('d');
      expect((await jwksOf()).map((key) => key.kid)).toEqual(first.map((key) => key.kid));
      expect((await stat(keysFile)).mode & 0o777).toBe(0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--oauth-dev with another issuer is refused before anything starts', async () => {
    await expect(startLocalStackWithDevAuthorization({ toolsDir: 'state-machines', port: 0, oauth: { issuer: 'https://issuer.example' } })).rejects.toThrow(
      OAuthConfigError,
    );
  });
});
