import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../lambdas/operations/ports.ts';
import { fetchIssuerMetadata, metadataUrls } from '../../lambdas/auth/issuer-metadata.ts';
import { createOAuthResourceServer } from '../../lambdas/auth/oauth-resource-server.ts';
import { DISCOVERY_RETRY_MS } from '../../lambdas/auth/token-verifier.ts';
import { startDevIssuer, type DevIssuer, type DevIssuerOptions } from '../../local/oauth/dev-issuer.ts';

const RESOURCE = 'http://127.0.0.1:3000/mcp';

const issuers: DevIssuer[] = [];
async function devIssuer(options: DevIssuerOptions = {}): Promise<DevIssuer> {
  const issuer = await startDevIssuer({ audience: RESOURCE, ...options });
  issuers.push(issuer);
  return issuer;
}
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(issuers.splice(0).map((issuer) => issuer.close()));
});

function capturingLogger() {
  const lines: Array<{ level: string; message: string } & Record<string, unknown>> = [];
  const logger: Logger = {
    error: (message, fields) => lines.push({ level: 'error', message, ...fields }),
    warn: (message, fields) => lines.push({ level: 'warn', message, ...fields }),
  };
  return { logger, lines };
}

const request = (token: string) => new Request(RESOURCE, { method: 'POST', headers: { authorization: `Bearer ${token}` } });

describe('issuer metadata URLs (MCP spec, Authorization Server Metadata Discovery)', () => {
  it('tries RFC 8414 then OpenID for an issuer without a path', () => {
    expect(metadataUrls('https://auth.example.com')).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server',
      'https://auth.example.com/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://auth.example.com/')).toEqual(metadataUrls('https://auth.example.com'));
  });

  it('inserts the well-known segment before the path, then falls back to OpenID insertion and appending', () => {
    expect(metadataUrls('https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC/')).toEqual([
      'https://cognito-idp.eu-west-1.amazonaws.com/.well-known/oauth-authorization-server/eu-west-1_AbC',
      'https://cognito-idp.eu-west-1.amazonaws.com/.well-known/openid-configuration/eu-west-1_AbC',
      'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC/.well-known/openid-configuration',
    ]);
  });
});

describe('discovery', () => {
  it('happens on the first authenticate, not when the resource server is created', async () => {
    const issuer = await devIssuer();
    const fetched: string[] = [];
    const recording = (input: string, init?: RequestInit) => {
      fetched.push(input);
      return fetch(input, init);
    };
    const server = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE }, { logger: capturingLogger().logger, fetch: recording });
    server.protectedResourceMetadataResponse(new Request('http://127.0.0.1:3000/.well-known/oauth-protected-resource'));
    // A value that is not a JWT is refused before anyone is asked.
    expect((await server.authenticate(request('not-a-jwt'))).ok).toBe(false);
    expect(fetched).toEqual([]);
    expect((await server.authenticate(request(await issuer.mint()))).ok).toBe(true);
    expect(fetched).toEqual([`${issuer.issuer}/.well-known/oauth-authorization-server`, issuer.jwksUri]);
    expect(issuer.requestLog).toEqual(['/.well-known/oauth-authorization-server', '/.well-known/jwks.json']);
  });

  it('falls back to OpenID discovery when the issuer serves no RFC 8414 metadata', async () => {
    const issuer = await devIssuer({ discovery: 'openid' });
    const server = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE }, { logger: capturingLogger().logger });
    expect((await server.authenticate(request(await issuer.mint({ sub: 'alice' })))).ok).toBe(true);
    expect(issuer.requestLog).toEqual(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/.well-known/jwks.json']);
  });

  it('finds an issuer with a path by RFC 8414 path insertion', async () => {
    const issuer = await devIssuer({ path: '/tenant1' });
    const server = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE }, { logger: capturingLogger().logger });
    expect((await server.authenticate(request(await issuer.mint()))).ok).toBe(true);
    expect(issuer.requestLog[0]).toBe('/.well-known/oauth-authorization-server/tenant1');
  });

  it('finds an issuer with a path that only appends openid-configuration, as Amazon Cognito does', async () => {
    const issuer = await devIssuer({ path: '/eu-west-1_AbC', discovery: 'openid' });
    const server = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE }, { logger: capturingLogger().logger });
    expect((await server.authenticate(request(await issuer.mint()))).ok).toBe(true);
    expect(issuer.requestLog.slice(0, 3)).toEqual([
      '/.well-known/oauth-authorization-server/eu-west-1_AbC',
      '/.well-known/openid-configuration/eu-west-1_AbC',
      '/eu-west-1_AbC/.well-known/openid-configuration',
    ]);
  });

  it('refuses metadata whose issuer differs from the configured one (RFC 8414 §3.3), answering 503', async () => {
    const issuer = await devIssuer({ advertisedIssuer: 'https://honest.example' });
    const { logger, lines } = capturingLogger();
    const server = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE }, { logger });
    await expect(fetchIssuerMetadata(issuer.issuer)).rejects.toThrow(/its issuer is "https:\/\/honest.example"/);
    const result = await server.authenticate(request(await issuer.mint()));
    if (result.ok) throw new Error('expected a refusal');
    expect(result.response.status).toBe(503);
    expect(result.response.headers.get('retry-after')).toBe('10');
    expect(lines).toEqual([expect.objectContaining({ level: 'error', message: 'token verification unavailable' })]);
    expect(issuer.requestLog).not.toContain('/.well-known/jwks.json');
  });

  it('after a failed discovery fails fast for a while, then retries and recovers', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const issuer = await devIssuer();
    let failing = true;
    const flakyFetch = (input: string, init?: RequestInit) => (failing ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init));
    const server = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE }, { logger: capturingLogger().logger, fetch: flakyFetch });
    const token = await issuer.mint({}, { expiresIn: 3600 });

    const statusOf = async () => {
      const result = await server.authenticate(request(token));
      return result.ok ? 200 : result.response.status;
    };
    expect(await statusOf()).toBe(503);
    failing = false;
    expect(await statusOf()).toBe(503);
    expect(issuer.requestLog).toEqual([]);
    vi.setSystemTime(Date.now() + DISCOVERY_RETRY_MS + 1);
    expect(await statusOf()).toBe(200);
  });

  it('answers 503, not 401, while the JWKS cannot be fetched', async () => {
    const issuer = await devIssuer();
    const noJwks = (input: string, init?: RequestInit) =>
      input.endsWith('/jwks.json') ? Promise.resolve(new Response('oops', { status: 500 })) : fetch(input, init);
    const server = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE }, { logger: capturingLogger().logger, fetch: noJwks });
    const result = await server.authenticate(request(await issuer.mint()));
    expect(result.ok ? 200 : result.response.status).toBe(503);
  });
});
