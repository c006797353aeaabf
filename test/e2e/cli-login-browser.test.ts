/**
 * `async-mcp login` as a person uses it: the real CLI process against the local stack with
 * its development authorization server (`--oauth-dev`). The CLI finds the authorization
 * server from the 401, registers, prints the authorization URL (and starts the `$BROWSER`
 * command), and waits on its loopback redirect; headless Chromium opens that URL and signs
 * in. Then the other commands use the kept login, renew it when it expires, and `logout`
 * removes it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_MCP_SCOPE } from '../../local/oauth/dev-authorization-server.ts';
import { startLocalStackWithDevAuthorization, type LocalStackWithDevAuthorization } from '../../local/oauth/local-stack-with-dev-authorization.ts';
import { cliEnv, lastJson, runCli, spawnCli, type CliRun } from '../client/support/cli-process.ts';
import { consoleNotices } from '../support/console-notices.ts';
import { expectedStats } from '../support/expected-stats.ts';
import { captureLogs } from '../support/log-capture.ts';

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
const hasChromium = existsSync(CHROMIUM);

interface KeptLogin {
  resource: string;
  tokens: { access_token: string; refresh_token?: string; expires_in?: number };
  tokensSavedAt: number;
}

describe.skipIf(!hasChromium)(
  `async-mcp login with Chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed; apt-get install -y chromium)`}`,
  () => {
    let stack: LocalStackWithDevAuthorization;
    let url: string;
    let work: string;
    let stateDir: string;
    let opened: string;
    let env: NodeJS.ProcessEnv;
    const cleanups: Array<() => Promise<unknown>> = [];

    beforeAll(async () => {
      stack = await startLocalStackWithDevAuthorization({ toolsDir: 'state-machines', port: 0, waitTimeScale: 0.01 }, { announce: () => undefined });
      url = stack.url.href;
      work = await mkdtemp(join(tmpdir(), 'async-mcp-cli-login-'));
      stateDir = join(work, 'state');
      opened = join(work, 'opened-urls');
      // $BROWSER is a recorder, so no run of the CLI ever starts a desktop browser; Chromium opens what it records.
      const recorder = join(work, 'record-url.mjs');
      await writeFile(recorder, `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(opened)}, process.argv[2] + '\\n');\n`);
      env = cliEnv(stateDir, { BROWSER: `${process.execPath} ${recorder}` });
    });
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      await stack?.close();
      await rm(work, { recursive: true, force: true });
    });

    async function browserFor(user: string): Promise<BrowserContext> {
      const profile = await mkdtemp(join(tmpdir(), `async-mcp-cli-chromium-${user}-`));
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      cleanups.push(
        () => rm(profile, { recursive: true, force: true }),
        () => context.close(),
      );
      return context;
    }

    async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    /** Runs `async-mcp login` and signs `user` in with Chromium at the URL it hands over (printed, or given to $BROWSER). */
    async function logIn(user: string, args: string[] = []): Promise<CliRun & { authorizationUrl: URL }> {
      const recordedBefore = existsSync(opened) ? (await readFile(opened, 'utf8')).split('\n').filter(Boolean).length : 0;
      const child = spawnCli(['login', url, ...args], env);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
      const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
      try {
        const href = args.includes('--no-browser')
          ? await until('the printed authorization URL', () => /^ {2}(http\S+)$/m.exec(stderr)?.[1])
          : await until('the URL given to $BROWSER', async () =>
              existsSync(opened) ? (await readFile(opened, 'utf8')).split('\n').filter(Boolean)[recordedBefore] : undefined,
            );
        const context = await browserFor(user);
        const page = context.pages()[0] ?? (await context.newPage());
        await page.goto(href);
        await page.fill('#username', user);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.getByText('Signed in. You can close this window').waitFor();
        const code = await exited;
        return { code, stdout, stderr, authorizationUrl: new URL(href) };
      } finally {
        if (child.exitCode === null) child.kill();
      }
    }

    async function keptLogins(): Promise<string[]> {
      return existsSync(join(stateDir, 'logins')) ? (await readdir(join(stateDir, 'logins'))).filter((name) => name.endsWith('.json')) : [];
    }
    async function keptLogin(): Promise<KeptLogin> {
      const [file] = await keptLogins();
      return JSON.parse(await readFile(join(stateDir, 'logins', file!), 'utf8')) as KeptLogin;
    }
    async function changeKeptLogin(change: (login: KeptLogin) => KeptLogin): Promise<void> {
      const [file] = await keptLogins();
      await writeFile(join(stateDir, 'logins', file!), JSON.stringify(change(await keptLogin())), { mode: 0o600 });
    }
    const noSecrets = (run: CliRun, login: KeptLogin) => {
      for (const secret of [login.tokens.access_token, login.tokens.refresh_token].filter(Boolean)) {
        expect(run.stdout).not.toContain(secret);
        expect(run.stderr).not.toContain(secret);
      }
    };

    let aliceCallId: string;

    it('before any login, a command against the server says which login to run', async () => {
      const run = await runCli(['tools', url], env);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`run npm run cli -- login ${url}`);
    });

    it('alice logs in in the browser the CLI starts; the login is kept for the resource URL in a file only she can read', async () => {
      const run = await logIn('alice');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`Logged in to ${url}`);
      expect(run.stderr).toContain(run.authorizationUrl.href);
      expect(run.stderr).toContain('Opened a browser');
      // MCP authorization: PKCE S256, the resource indicator (RFC 8707), the metadata's scope, a loopback redirect.
      const query = run.authorizationUrl.searchParams;
      expect(query.get('code_challenge_method')).toBe('S256');
      expect(query.get('resource')).toBe(url);
      expect(query.get('scope')?.split(' ')).toContain(DEV_MCP_SCOPE);
      expect(query.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      expect(run.authorizationUrl.href.startsWith(stack.authorizationServer.issuer)).toBe(true);

      expect(await keptLogins()).toHaveLength(1);
      const login = await keptLogin();
      expect(login.resource).toBe(url);
      expect(decodeJwt(login.tokens.access_token)).toMatchObject({ sub: 'alice', aud: url });
      expect(login.tokens.refresh_token).toBeTruthy();
      expect((await stat(join(stateDir, 'logins'))).mode & 0o777).toBe(0o700);
      expect((await stat(join(stateDir, 'logins', (await keptLogins())[0]!))).mode & 0o777).toBe(0o600);
      noSecrets(run, login);
    });

    it('call and tools use the kept login: alice runs analyze_dataset and gets its result', async () => {
      const tools = await runCli(['tools', url], env);
      expect(tools.code, tools.stderr).toBe(0);
      expect(tools.stdout).toContain('analyze_dataset');
      const call = await runCli(['call', url, 'analyze_dataset', '-a', 'rows=2000', '-a', 'seed=11', '--json'], env);
      expect(call.code, call.stderr).toBe(0);
      expect(lastJson(call).structuredContent.count).toBe(expectedStats(2000, 11).count);

      const detached = await runCli(['call', url, 'analyze_dataset', '-a', 'rows=500', '-a', 'seed=3', '--detach', '--json'], env);
      expect(detached.code, detached.stderr).toBe(0);
      const joined = await runCli(['join', lastJson(detached).id, '--json'], env);
      expect(joined.code, joined.stderr).toBe(0);
      expect(lastJson(joined).structuredContent.count).toBe(expectedStats(500, 3).count);
      // Left unjoined, so the next status asks the server.
      const another = await runCli(['call', url, 'analyze_dataset', '-a', 'rows=500', '-a', 'seed=5', '--detach', '--json'], env);
      expect(another.code, another.stderr).toBe(0);
      aliceCallId = lastJson(another).id;
      noSecrets(call, await keptLogin());
    });

    it('a second login, as bob with --no-browser, replaces alice’s, and bob cannot see alice’s call', async () => {
      const before = (await readFile(opened, 'utf8')).split('\n').filter(Boolean).length;
      const run = await logIn('bob', ['--no-browser']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toContain('Opened a browser');
      expect((await readFile(opened, 'utf8')).split('\n').filter(Boolean)).toHaveLength(before);
      expect(decodeJwt((await keptLogin()).tokens.access_token).sub).toBe('bob');
      expect(await keptLogins()).toHaveLength(1);

      const bobsLook = await runCli(['status', aliceCallId, '--json'], env);
      expect(bobsLook.code, bobsLook.stdout).toBe(1);
      expect(lastJson(bobsLook).error.message).toMatch(/not found|unknown/i);
    });

    it('an expired access token is refreshed without a new login, by its expiry and on a 401', async () => {
      // The client's clock says the token has run out: it is renewed before the request.
      const old = await keptLogin();
      await changeKeptLogin((login) => ({ ...login, tokensSavedAt: login.tokensSavedAt - (login.tokens.expires_in! + 60) * 1000 }));
      const byExpiry = await runCli(['tools', url], env);
      expect(byExpiry.code, byExpiry.stderr).toBe(0);
      expect(byExpiry.stderr).not.toContain('open this URL');
      const renewed = await keptLogin();
      expect(renewed.tokens.access_token).not.toBe(old.tokens.access_token);
      expect(decodeJwt(renewed.tokens.access_token).sub).toBe('bob');
      expect(renewed.tokensSavedAt).toBeGreaterThan(old.tokensSavedAt);

      // The server refuses a token the client still thought good: the 401 renews it, and the request is sent again.
      await changeKeptLogin((login) => ({ ...login, tokens: { ...login.tokens, access_token: 'revoked-or-expired' } }));
      const rejected = captureLogs('token rejected');
      const on401 = await runCli(['tools', url], env);
      expect(on401.code, on401.stderr).toBe(0);
      expect(on401.stdout).toContain('analyze_dataset');
      expect(decodeJwt((await keptLogin()).tokens.access_token).sub).toBe('bob');
      noSecrets(on401, await keptLogin());
      // The server logged its refusal of the stale token.
      expect(rejected.entries).toEqual([expect.objectContaining({ level: 'WARN', reason: 'The access token is malformed' })]);
    });

    it('--token wins over the kept login; ASYNC_MCP_TOKEN, meant for servers without one, does not', async () => {
      // A bad token given explicitly is sent, and refused, even though a good login is kept.
      const rejected = captureLogs('token rejected');
      const withToken = await runCli(['tools', url, '--token', 'not-a-valid-token'], env);
      expect(withToken.code, withToken.stdout).toBe(1);
      expect(withToken.stderr).toContain('HTTP 401');
      expect(rejected.entries.length).toBeGreaterThan(0);
      for (const entry of rejected.entries) expect(entry).toMatchObject({ level: 'WARN', reason: 'The access token is malformed' });
      const withEnv = await runCli(['tools', url], { ...env, ASYNC_MCP_TOKEN: 'token-for-another-server' });
      expect(withEnv.code, withEnv.stderr).toBe(0);
      expect(withEnv.stdout).toContain('analyze_dataset');
      expect((await runCli(['tools', url], env)).code).toBe(0);
    });

    it('logout removes the login, the next call says to log in again, and a second logout is not an error', async () => {
      // oidc-provider says, at the first revocation, that the development server keeps its default revocation policy.
      const notices = consoleNotices('info', /^oidc-provider NOTICE: default features\.revocation\.allowedPolicy/);
      const out = await runCli(['logout', url], env);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain(`Logged out of ${url}`);
      expect(await keptLogins()).toHaveLength(0);

      const call = await runCli(['call', url, 'analyze_dataset', '-a', 'rows=10'], env);
      expect(call.code).toBe(1);
      expect(call.stderr).toContain(`run npm run cli -- login ${url}`);

      const again = await runCli(['logout', url], env);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`Not logged in to ${url}`);
      // Once a process: the first logout's revocation of the refresh token is the first one here.
      expect(notices()).toHaveLength(1);
    });
  },
);
