/**
 * The MCP authorization flow through `mcp-remote`, the stdio bridge Claude Desktop and Cursor
 * run for OAuth-protected servers: the official SDK's stdio client speaks MCP to the bridge as
 * a host does, the bridge meets the server's 401, discovers the development authorization
 * server, registers, and prints its authorization URL; headless Chromium (playwright-core)
 * opens it, signs the user in, allows access and lands on the bridge's loopback callback,
 * and the bridge exchanges the code and connects. Three hosts stand behind it: one from before
 * tasks (2025-06-18), which gets the handle tools; a 2025-11-25 one that declares no tasks,
 * which gets them too; and a 2025-11-25 one that declares tasks and
 * runs a task. Screenshots of the sign-in, consent and callback pages go to
 * test-results/oauth-browser/ (prefixed mcp-remote-).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decodeJwt } from 'jose';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-service.ts';
import { DEV_MCP_SCOPE } from '../../local/oauth/dev-authorization-server.ts';
import { startLocalStackWithDevAuthorization, type LocalStackWithDevAuthorization } from '../../local/oauth/local-stack-with-dev-authorization.ts';
import { expectedStats } from '../support/expected-stats.ts';
import {
  freeLoopbackPort,
  MCP_REMOTE_CALLBACK_PATH,
  startMcpRemote,
  storedTokens,
  type HostClient,
  type McpRemoteBridge,
  type McpRemoteOptions,
} from '../support/mcp-remote-bridge.ts';

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
const HANDLE_TOOLS = ['operation_cancel', 'operation_list', 'operation_result', 'operation_status'];

const hasChromium = existsSync(CHROMIUM);

/** The host's revision and the bridge's extra flags. */
type HostSettings<C extends HostClient = Client> = Pick<McpRemoteOptions, 'protocolVersion' | 'extraArgs'> & { client?: C };

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: { operationId?: string; operations?: Array<{ operationId: string }>; [field: string]: unknown };
}

describe.skipIf(!hasChromium)(
  `signing in through mcp-remote with Chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed; apt-get install -y chromium)`}`,
  () => {
    let stack: LocalStackWithDevAuthorization;
    const cleanups: Array<() => Promise<unknown>> = [];

    beforeAll(async () => {
      await mkdir(OUTPUT_DIR, { recursive: true });
      // Wait states at a tenth of real time and a 1-second blocking bound: a 20-second delay is handed off as a handle.
      stack = await startLocalStackWithDevAuthorization(
        { toolsDir: 'state-machines', port: 0, waitTimeScale: 0.1, limits: { ...DEFAULT_LIMITS, maxBlockingSeconds: 1 } },
        { announce: () => undefined },
      );
    });
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      await stack?.close();
    });

    /** An empty directory, removed after the suite. */
    async function tempDir(prefix: string): Promise<string> {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return dir;
    }

    /** A bridge for `user` with the given credential store, stopped after the suite if the test does not stop it. */
    function bridge<C extends HostClient = Client>(user: string, configDir: string, callbackPort: number, host: HostSettings<C> = {}): McpRemoteBridge<C> {
      const started = startMcpRemote<C>({ serverUrl: stack.url, callbackPort, configDir, clientName: `mcp-remote-host-${user}`, ...host });
      cleanups.push(() => started.close());
      return started;
    }

    /** Chromium, from an empty profile, follows the bridge's authorization URL and signs `user` in. */
    async function signInInBrowser(user: string, authorizationUrl: URL, callbackPort: number) {
      const profile = await tempDir(`async-mcp-chromium-mcp-remote-${user}-`);
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        await page.goto(authorizationUrl.href);
        expect(await page.getByRole('alert').textContent()).toContain('Development only');
        await page.screenshot({ path: join(OUTPUT_DIR, `mcp-remote-${user}-1-sign-in.png`), fullPage: true });
        await page.fill('#username', user);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('button', { name: 'Allow' }).waitFor();
        expect(await page.textContent('body')).toContain(DEV_MCP_SCOPE);
        await page.screenshot({ path: join(OUTPUT_DIR, `mcp-remote-${user}-2-consent.png`), fullPage: true });
        await page.getByRole('button', { name: 'Allow' }).click();
        // The authorization server redirects to the bridge's own loopback listener.
        await page.waitForURL((url) => url.origin === `http://127.0.0.1:${callbackPort}` && url.pathname === MCP_REMOTE_CALLBACK_PATH);
        expect(await page.textContent('body')).toContain('Authorization successful');
        await page.screenshot({ path: join(OUTPUT_DIR, `mcp-remote-${user}-3-callback.png`), fullPage: true });
      } finally {
        await context.close();
      }
    }

    /** Starts the bridge with an empty store, expects it to ask for a sign-in, and completes it in the browser. */
    async function signIn(user: string, host: HostSettings = {}) {
      const configDir = await tempDir(`async-mcp-mcp-remote-${user}-`);
      const callbackPort = await freeLoopbackPort();
      const started = bridge(user, configDir, callbackPort, host);
      const authorizationUrl = await started.authorizationUrl;
      expect(authorizationUrl, started.stderr()).toBeInstanceOf(URL);
      expect(authorizationUrl!.searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${callbackPort}${MCP_REMOTE_CALLBACK_PATH}`);
      expect(authorizationUrl!.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorizationUrl!.searchParams.get('resource')).toBe(stack.url.href);
      await signInInBrowser(user, authorizationUrl!, callbackPort);
      const client = await started.connected;
      const tokens = await storedTokens(configDir);
      expect(decodeJwt(tokens!.access_token)).toMatchObject({ sub: user, aud: stack.url.href, scope: expect.stringContaining(DEV_MCP_SCOPE) });
      return { client, configDir, callbackPort, bridge: started, tokens: tokens! };
    }

    const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;

    let alice: Awaited<ReturnType<typeof signIn>>;
    let aliceOperationId: string;

    it('alice signs in through mcp-remote in the browser, sees the handle tools, and gets analyze_dataset’s result through them', async () => {
      alice = await signIn('alice');
      const names = (await alice.client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['analyze_dataset', ...HANDLE_TOOLS]));

      // A 20-second delay at a tenth of real time is past the 1-second bound: the answer is a handle.
      const started = await call(alice.client, 'analyze_dataset', { rows: 2000, seed: 11, delaySeconds: 20 });
      expect(started.structuredContent).toEqual({ operationId: expect.any(String), status: 'working', pollAfterSeconds: 2 });
      aliceOperationId = started.structuredContent!.operationId!;
      const result = await vi.waitFor(
        async () => {
          const answer = await call(alice.client, 'operation_result', { operationId: aliceOperationId, waitSeconds: 1 });
          expect(answer.structuredContent?.operationId).toBeUndefined();
          return answer;
        },
        { timeout: 30_000, interval: 50 },
      );
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ count: 2000, min: expectedStats(2000, 11).min, max: expectedStats(2000, 11).max });
    });

    it('bob, on a 2025-11-25 host that declares no tasks, behind mcp-remote as configured by default, signs in, sees the handle tools, gets analyze_dataset’s result within its bound, and cannot see or fetch alice’s operation', async () => {
      // The bridge relays the host's initialize; its session id records that no tasks were declared.
      const bob = await signIn('bob', { protocolVersion: '2025-11-25' });
      expect(bob.client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      expect((await bob.client.listTools()).tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['analyze_dataset', ...HANDLE_TOOLS]));
      const quick = await call(bob.client, 'analyze_dataset', { rows: 50, seed: 5 });
      expect(quick.isError).toBeFalsy();
      expect(quick.structuredContent).toMatchObject({ count: 50, min: expectedStats(50, 5).min });

      const notFound = await call(bob.client, 'operation_status', { operationId: 'never-issued' });
      expect(notFound.isError).toBe(true);
      expect(await call(bob.client, 'operation_status', { operationId: aliceOperationId })).toEqual(notFound);
      expect(await call(bob.client, 'operation_result', { operationId: aliceOperationId })).toEqual(notFound);
      const listed = (await call(bob.client, 'operation_list', {})).structuredContent!.operations!;
      expect(listed.map((operation) => operation.operationId)).not.toContain(aliceOperationId);
    });

    it('mcp-remote restarted with alice’s store reuses her tokens without a new sign-in, and a host with 2025-11-25 tasks runs analyze_dataset as a task through it', async () => {
      await alice.bridge.close();
      // The v1 SDK's Client at 2025-11-25, declaring tasks at initialize as such a host does.
      const host = new V1Client({ name: 'mcp-remote-host-alice-tasks', version: '1.0.0' }, { capabilities: { tasks: { requests: { tools: { call: {} } } } } });
      const restarted = bridge('alice', alice.configDir, alice.callbackPort, { client: host });
      // Settles with the URL if the bridge asks for a sign-in, or with undefined once it connected without one.
      expect(await restarted.authorizationUrl, restarted.stderr()).toBeUndefined();
      const client = await restarted.connected;
      expect(restarted.stderr()).not.toContain('Please authorize');
      expect((await storedTokens(alice.configDir))!.access_token).toBe(alice.tokens.access_token);
      expect(client.getServerVersion()?.name).toBe('async-mcp');

      // "To create a task, requestors send a request with the task field included in the request params" (2025-11-25).
      const kinds: string[] = [];
      let result: ToolResult | undefined;
      for await (const message of client.experimental.tasks.callToolStream(
        { name: 'analyze_dataset', arguments: { rows: 300, seed: 7, delaySeconds: 5 } },
        undefined,
        { task: { ttl: 600_000 } },
      )) {
        kinds.push(message.type);
        if (message.type === 'error') throw message.error;
        if (message.type === 'result') result = message.result as ToolResult;
      }
      expect(kinds[0]).toBe('taskCreated');
      expect(result?.structuredContent).toMatchObject({ count: 300, min: expectedStats(300, 7).min });
    });
  },
);
