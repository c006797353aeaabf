/**
 * `npm start -- --oauth-issuer URL --oauth-audience AUD --oauth-scopes "a b"` (or the
 * ASYNC_MCP_OAUTH_* variables): the settings, checked before anything starts, and a real
 * process that answers as an OAuth resource server.
 */
import { spawn } from 'node:child_process';

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OAuthConfigError } from '../../lambdas/auth/oauth-config.ts';
import { startDevIssuer, type DevIssuer } from '../../local/oauth/dev-issuer.ts';
import { oauthOptionsFrom } from '../../local/oauth/oauth-options.ts';

const ISSUER = 'https://issuer.example.com';

describe('oauthOptionsFrom', () => {
  it('is off without an issuer', () => {
    expect(oauthOptionsFrom({}, {})).toBeUndefined();
  });

  it('takes the flags, scopes separated by spaces or commas', () => {
    expect(oauthOptionsFrom({ 'oauth-issuer': ISSUER, 'oauth-audience': 'api://mcp', 'oauth-scopes': 'mcp:tools mcp:admin' }, {})).toEqual({
      issuer: ISSUER,
      audience: 'api://mcp',
      requiredScopes: ['mcp:tools', 'mcp:admin'],
    });
    expect(oauthOptionsFrom({ 'oauth-issuer': ISSUER, 'oauth-scopes': 'a,b' }, {})).toEqual({ issuer: ISSUER, requiredScopes: ['a', 'b'] });
  });

  it('falls back to ASYNC_MCP_OAUTH_ISSUER, _AUDIENCE and _SCOPES, each flag winning over its variable', () => {
    const env = { ASYNC_MCP_OAUTH_ISSUER: ISSUER, ASYNC_MCP_OAUTH_AUDIENCE: 'api://env', ASYNC_MCP_OAUTH_SCOPES: 'env' };
    expect(oauthOptionsFrom({}, env)).toEqual({ issuer: ISSUER, audience: 'api://env', requiredScopes: ['env'] });
    expect(oauthOptionsFrom({ 'oauth-audience': 'api://flag' }, env)).toEqual({ issuer: ISSUER, audience: 'api://flag', requiredScopes: ['env'] });
  });

  it('refuses settings that cannot work before anything starts', () => {
    expect(() => oauthOptionsFrom({ 'oauth-issuer': 'http://issuer.example.com' }, {})).toThrow(OAuthConfigError);
    expect(() => oauthOptionsFrom({ 'oauth-issuer': 'not a url' }, {})).toThrow(/not an absolute URL/);
    expect(() => oauthOptionsFrom({ 'oauth-issuer': ISSUER, 'oauth-scopes': 'a "b"' }, {})).toThrow(/not a valid scope token/);
    expect(() => oauthOptionsFrom({ 'oauth-audience': 'api://mcp' }, {})).toThrow(/need --oauth-issuer/);
  });
});

describe('npm start with --oauth-issuer', () => {
  let issuer: DevIssuer;

  beforeAll(async () => {
    issuer = await startDevIssuer();
  });
  afterAll(() => issuer?.close());

  function start(args: string[], env: Record<string, string> = {}) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--port', '0', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, exited, output: () => ({ stdout, stderr }) };
  }

  it('serves as a resource server of that issuer: 401 without a token, the metadata, a token for the server accepted', async () => {
    const server = start(['--oauth-issuer', issuer.issuer, '--oauth-scopes', 'mcp:tools']);
    try {
      // The banner is several writes: the OAuth line may arrive after the URL's.
      await vi.waitFor(() => expect(server.output().stdout).toContain(`OAuth: bearer tokens from ${issuer.issuer}`), { timeout: 30_000, interval: 50 });
      const url = new URL(server.output().stdout.match(/serving MCP at (http:\/\/\S+)/)![1]!);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const unauthenticated = await fetch(url, { method: 'POST', headers, body });
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.headers.get('www-authenticate')).toContain('resource_metadata=');
      const metadata = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', url));
      expect(await metadata.json()).toMatchObject({ authorization_servers: [issuer.issuer], scopes_supported: ['mcp:tools'] });
      const token = await issuer.mint({ sub: 'alice', aud: url.href, scope: 'mcp:tools' });
      const authenticated = await fetch(url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}` }, body });
      expect(authenticated.status).not.toBe(401);
      expect(authenticated.status).toBeLessThan(500);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  // The variables take the same path (oauthOptionsFrom above): one process is enough here.
  it('stops with exit code 2 on an issuer that cannot work, before starting anything', async () => {
    const server = start([], { ASYNC_MCP_OAUTH_ISSUER: 'http://issuer.example.com' });
    expect(await server.exited).toBe(2);
    expect(server.output().stderr).toMatch(/Cannot start: OAuth issuer http:\/\/issuer\.example\.com uses http on a host that is not loopback/);
  });
});
