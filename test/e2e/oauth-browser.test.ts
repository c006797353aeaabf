/**
 * The MCP authorization flow with a person at a browser: headless Chromium (driven by
 * playwright-core) opens the authorization URL the SDK's OAuth client hands over, signs in
 * on the development server's page, allows access, and is redirected to the client's
 * loopback listener, which passes the code back as a CLI or desktop client does.
 * Screenshots of the sign-in and consent pages go to test-results/oauth-browser/.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { decodeJwt } from 'jose';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEV_MCP_SCOPE } from '../../local/oauth/dev-authorization-server.ts';
import { startLocalStackWithDevAuthorization, type LocalStackWithDevAuthorization } from '../../local/oauth/local-stack-with-dev-authorization.ts';
import { expectedStats } from '../support/expected-stats.ts';
import { captureLogs } from '../support/log-capture.ts';
import { MemoryOAuthProvider } from '../support/oauth-dev-client.ts';
import { MODERN_VERSION, modernDispatch, modernRequest } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

const CHROMIUM = '/usr/bin/chromium';
// The flags Chromium needs on a CI network with no GPU, no sandbox and no Google services.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const OUTPUT_DIR = resolve(import.meta.dirname, '../../test-results/oauth-browser');
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

const hasChromium = existsSync(CHROMIUM);

describe.skipIf(!hasChromium)(
  `the browser sign-in with Chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed; apt-get install -y chromium)`}`,
  () => {
    let stack: LocalStackWithDevAuthorization;
    let callbackServer: Server;
    let redirectUri: string;
    const callbacks: URLSearchParams[] = [];
    const cleanups: Array<() => Promise<unknown>> = [];

    beforeAll(async () => {
      await mkdir(OUTPUT_DIR, { recursive: true });
      stack = await startLocalStackWithDevAuthorization({ toolsDir: 'state-machines', port: 0, waitTimeScale: 0.01 }, { announce: () => undefined });
      // The client's loopback redirect listener (RFC 8252 §7.3).
      callbackServer = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (url.pathname !== '/callback') return void res.writeHead(404).end();
        callbacks.push(url.searchParams);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<p id="done">Signed in. You can close this window.</p>');
      });
      await new Promise<void>((done) => callbackServer.listen(0, '127.0.0.1', done));
      redirectUri = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
    });
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      await new Promise((done) => callbackServer?.close(done));
      await stack?.close();
    });

    /** A fresh browser profile: each user signs in from an empty user-data dir. */
    async function browserFor(user: string): Promise<BrowserContext> {
      const profile = await mkdtemp(join(tmpdir(), `async-mcp-chromium-${user}-`));
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      cleanups.push(
        () => rm(profile, { recursive: true, force: true }),
        () => context.close(),
      );
      return context;
    }

    /** The SDK client meets the 401; Chromium signs `user` in; the code comes back to the loopback listener. */
    async function signIn(user: string, provider = new MemoryOAuthProvider(`e2e browser ${user}`, { redirectUri })) {
      const transport = new StreamableHTTPClientTransport(stack.url, { authProvider: provider });
      await expect(
        new Client({ name: `browser-${user}`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } }).connect(transport),
      ).rejects.toBeInstanceOf(UnauthorizedError);
      expect(provider.authorizationUrls).toHaveLength(1);

      const context = await browserFor(user);
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(provider.authorizationUrls[0]!.href);
      expect(await page.getByRole('alert').textContent()).toContain('Development only');
      await page.screenshot({ path: join(OUTPUT_DIR, `${user}-1-sign-in.png`), fullPage: true });
      await page.fill('#username', user);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      expect(await page.textContent('body')).toContain(DEV_MCP_SCOPE);
      await page.screenshot({ path: join(OUTPUT_DIR, `${user}-2-consent.png`), fullPage: true });
      const before = callbacks.length;
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.locator('#done').waitFor();
      expect(callbacks).toHaveLength(before + 1);
      const callback = callbacks.at(-1)!;
      expect(callback.get('state')).toBe(provider.expectedState);

      await transport.finishAuth(callback);
      const client = new Client({ name: `browser-${user}`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(stack.url, { authProvider: provider }));
      cleanups.push(() => client.close());
      return { client, provider };
    }

    const bearer = (provider: MemoryOAuthProvider) => ({ authorization: `Bearer ${provider.savedTokens!.access_token}` });
    let alice: Awaited<ReturnType<typeof signIn>>;
    let aliceTaskId: string;

    it('alice signs in with the browser, starts analyze_dataset as a task and gets its result', async () => {
      alice = await signIn('alice');
      expect(decodeJwt(alice.provider.savedTokens!.access_token)).toMatchObject({ sub: 'alice', aud: stack.url.href });
      const session = createTaskSessionFromClient(alice.client, {
        endpointId: 'e2e-oauth-browser',
        rawDispatch: ((request: unknown) => modernDispatch(stack.url, bearer(alice.provider))(request)) as never,
        v2RequestFraming: { protocolVersion: MODERN_VERSION, clientInfo: { name: 'browser-alice', version: '1.0.0' }, clientCapabilities: {} },
      });
      try {
        const execution = await session.callTool('analyze_dataset', { rows: 2000, seed: 11 });
        expect(execution.kind).toBe('task');
        aliceTaskId = execution.handle!.taskId as string;
        const { outcome } = await execution.settle();
        const result = resultFromTaskOutcome(outcome) as { structuredContent: Record<string, number> };
        expect(result.structuredContent.count).toBe(expectedStats(2000, 11).count);
      } finally {
        await session.close();
      }
    });

    it('bob signs in with his own browser and cannot see alice’s task', async () => {
      const bob = await signIn('bob');
      expect(decodeJwt(bob.provider.savedTokens!.access_token).sub).toBe('bob');
      expect(rpcError(await modernRequest(stack.url, 'tasks/get', { taskId: aliceTaskId }, { capabilities: TASKS, headers: bearer(bob.provider) })).code).toBe(
        -32602,
      );
      expect(ok(await modernRequest(stack.url, 'tasks/get', { taskId: aliceTaskId }, { capabilities: TASKS, headers: bearer(alice.provider) })).status).toBe(
        'completed',
      );
    });

    it('a host that registers the refresh_token grant and asks for no offline_access gets a refresh token that renews its access token', async () => {
      // As Claude, VS Code and mcp-remote register: the SDK's default grant types, and its scope
      // request left to the protected resource's metadata (only an explicitly listed grant makes
      // the SDK add offline_access).
      const host = new (class extends MemoryOAuthProvider {
        override get clientMetadata() {
          const { grant_types: _grants, ...metadata } = super.clientMetadata;
          return metadata;
        }
      })('e2e browser host dana', { redirectUri });
      const dana = await signIn('dana', host);
      expect((dana.provider.clientInformation() as { grant_types?: string[] }).grant_types).toContain('refresh_token');
      const scope = dana.provider.authorizationUrls[0]!.searchParams.get('scope')!.split(' ');
      expect(scope).toContain(DEV_MCP_SCOPE);
      expect(scope).not.toContain('offline_access');
      expect(dana.provider.savedTokens!.refresh_token).toBeTruthy();

      const before = dana.provider.savedTokens!.access_token;
      const logs = captureLogs('token rejected');
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        vi.setSystemTime(decodeJwt(before).exp! * 1000 + 120_000);
        expect((await modernRequest(stack.url, 'tools/list', {}, { headers: bearer(dana.provider) })).status).toBe(401);
        expect((await dana.client.listTools()).tools.map((tool) => tool.name)).toContain('analyze_dataset');
      } finally {
        vi.useRealTimers();
      }
      expect(dana.provider.savedTokens!.access_token).not.toBe(before);
      expect(decodeJwt(dana.provider.savedTokens!.access_token).sub).toBe('dana');
      expect(dana.provider.authorizationUrls).toHaveLength(1);
      // The stale token was refused, and logged so, before the SDK renewed it.
      expect(logs.entries.length).toBeGreaterThan(0);
      for (const entry of logs.entries) expect(entry).toMatchObject({ level: 'WARN', reason: expect.any(String) });
    });

    it('offline_access is in neither the protected-resource metadata nor the WWW-Authenticate challenge', async () => {
      const challenge = (await modernRequest(stack.url, 'tools/list', {})).headers.get('www-authenticate')!;
      expect(challenge).toContain(`scope="${DEV_MCP_SCOPE}"`);
      expect(challenge).not.toContain('offline_access');
      const metadata = (await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', stack.url))).json()) as { scopes_supported?: string[] };
      expect(metadata.scopes_supported).toEqual([DEV_MCP_SCOPE]);
    });

    it('alice’s expired access token is refreshed without opening the browser again', async () => {
      const before = alice.provider.savedTokens!.access_token;
      const logs = captureLogs('token rejected');
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        vi.setSystemTime(decodeJwt(before).exp! * 1000 + 120_000);
        expect((await modernRequest(stack.url, 'tools/list', {}, { headers: bearer(alice.provider) })).status).toBe(401);
        expect((await alice.client.listTools()).tools.map((tool) => tool.name)).toContain('analyze_dataset');
      } finally {
        vi.useRealTimers();
      }
      expect(alice.provider.savedTokens!.access_token).not.toBe(before);
      expect(alice.provider.authorizationUrls).toHaveLength(1);
      expect(logs.entries.length).toBeGreaterThan(0);
      for (const entry of logs.entries) expect(entry).toMatchObject({ level: 'WARN', reason: expect.any(String) });
    });
  },
);
