/**
 * `async-mcp login <url>` lets the server it is pointed at pick the authorization server, and
 * so the URL the CLI hands to the operating system's opener. A hostile server can name a
 * `file:`, `smb:` or custom-scheme "authorization endpoint" (the pattern of mcp-remote's
 * CVE-2025-6514): the CLI must refuse it before any opener runs, and say why. The real CLI
 * process against a fake MCP server and authorization server on loopback; `$BROWSER` is a
 * recorder, so nothing here ever starts a desktop browser.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserCommand, openableUrl } from '../../client/login/open-browser.ts';
import { cliEnv, runCli } from './support/cli-process.ts';

let server: Server;
let origin: string;
let work: string;
/** The authorization endpoint the fake authorization server's metadata names, per test. */
let authorizationEndpoint = '';
const registrations: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
      void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
    if (path === '/mcp')
      return json(401, { error: 'invalid_token' }, { 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` });
    if (path === '/.well-known/oauth-protected-resource/mcp') return json(200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
    if (path === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer: origin,
        authorization_endpoint: authorizationEndpoint,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    }
    if (path === '/register') {
      const metadata = JSON.parse(body) as Record<string, unknown>;
      registrations.push(metadata);
      return json(201, { ...metadata, client_id: `client-${registrations.length}` });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  work = await mkdtemp(join(tmpdir(), 'async-mcp-login-opener-'));
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
  await rm(work, { recursive: true, force: true });
});

async function loginAgainst(endpoint: string, name: string) {
  authorizationEndpoint = endpoint;
  const opened = join(work, `${name}-opened`);
  const recorder = join(work, `${name}-record-url.mjs`);
  await writeFile(recorder, `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(opened)}, process.argv[2] + '\\n');\n`);
  // --timeout bounds the wait for a browser that, without the guard, would be sent to the endpoint.
  const run = await runCli(['login', `${origin}/mcp`, '--timeout', '3s'], cliEnv(join(work, `${name}-state`), { BROWSER: `${process.execPath} ${recorder}` }));
  return { run, opened: existsSync(opened) ? await readFile(opened, 'utf8') : undefined };
}

describe('async-mcp login opens only web URLs', () => {
  it('a server whose authorization metadata names a file: endpoint: the opener is never called, and the error names the scheme and the metadata field', async () => {
    const { run, opened } = await loginAgainst('file:///etc/passwd', 'file');
    expect(opened).toBeUndefined();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('file:');
    expect(run.stderr).toContain('authorization_endpoint');
    expect(run.stderr).toContain(origin);
    // Refused before it is shown: the user is not invited to paste it either.
    expect(run.stderr).not.toContain('open this URL in a browser');
  });

  it.each([['smb://attacker.example/share'], ['ms-settings:privacy?x=1'], ['http://attacker.example/authorize']])(
    'an authorization endpoint %s is refused the same way',
    async (endpoint) => {
      const { run, opened } = await loginAgainst(endpoint, encodeURIComponent(endpoint).slice(0, 20));
      expect(opened).toBeUndefined();
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(new URL(endpoint).protocol);
      expect(run.stderr).toContain('authorization_endpoint');
    },
  );

  it('the CLI registers for refresh tokens through its grant types, as a native public client', () => {
    expect(registrations[0]).toMatchObject({
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    });
  });
});

describe('which URLs a browser may be sent to', () => {
  it.each([
    ['https://as.example/authorize?a=1'],
    ['http://127.0.0.1:8080/auth'],
    ['http://127.5.6.7/auth'],
    ['http://[::1]:9000/auth'],
    ['http://localhost:3001/auth'],
  ])('%s may be opened', (url) => {
    expect(openableUrl(new URL(url))).toBe(true);
  });
  it.each([
    ['file:///etc/passwd'],
    ['smb://host/share'],
    ['ms-excel:ofe|u|https://x'],
    ['http://attacker.example/auth'],
    ['http://127.0.0.1.attacker.example/auth'],
    ['javascript:alert(1)'],
  ])('%s may not', (url) => {
    expect(openableUrl(new URL(url))).toBe(false);
  });
});

describe('the Windows opener', () => {
  it('is built without an unescaped & reaching cmd: the URL is one argument to a program that no shell parses', () => {
    const url = 'https://as.example/authorize?response_type=code&client_id=x&calc.exe&state=y';
    const command = browserCommand(url, {}, 'win32');
    expect(command).toBeDefined();
    const [program = '', ...args] = command ?? [];
    expect(program.toLowerCase()).not.toMatch(/^(cmd|cmd\.exe|powershell|pwsh)$/);
    expect(args.at(-1)).toBe(url);
    expect(args.filter((arg) => arg.includes('&'))).toEqual([url]);
  });
});
