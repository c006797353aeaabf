import { exportSPKI, importJWK, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../lambdas/operations/ports.ts';
import { bearerToken, createOAuthResourceServer, type OAuthResourceServer } from '../../lambdas/auth/oauth-resource-server.ts';
import { OAuthConfigError } from '../../lambdas/auth/oauth-config.ts';
import { iamPrincipal, oauthPrincipal } from '../../lambdas/auth/principals.ts';
import { startDevIssuer, type DevIssuer } from '../../local/oauth/dev-issuer.ts';

const RESOURCE = 'http://127.0.0.1:3000/mcp';
const METADATA_URL = 'http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp';

function capturingLogger() {
  const lines: string[] = [];
  const logger: Logger = {
    error: (message, fields) => lines.push(JSON.stringify({ level: 'error', message, ...fields })),
    warn: (message, fields) => lines.push(JSON.stringify({ level: 'warn', message, ...fields })),
  };
  return { logger, lines };
}

function mcpRequest(token?: string, authorization = token === undefined ? undefined : `Bearer ${token}`): Request {
  return new Request(RESOURCE, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  });
}

const now = () => Math.floor(Date.now() / 1000);

/** The parameters of a `Bearer k="v", ...` challenge. */
function challengeParams(header: string | null): Record<string, string> {
  expect(header).toMatch(/^Bearer /);
  return Object.fromEntries([...header!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

let issuer: DevIssuer;
let server: OAuthResourceServer;
const logs = capturingLogger();

beforeAll(async () => {
  issuer = await startDevIssuer({ audience: RESOURCE });
  server = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE }, { logger: logs.logger });
});
afterAll(() => issuer.close());

async function refusal(token: string) {
  const result = await server.authenticate(mcpRequest(token));
  if (result.ok) throw new Error('expected a refusal');
  const text = await result.response.text();
  return { status: result.response.status, challenge: challengeParams(result.response.headers.get('www-authenticate')), text };
}

describe('OAuth resource server: valid tokens', () => {
  it('accepts a token from the issuer for this resource; the principal is oauth:<iss>#<sub>', async () => {
    const result = await server.authenticate(mcpRequest(await issuer.mint({ sub: 'alice', scope: 'mcp:tools profile' })));
    expect(result).toEqual({ ok: true, principal: `oauth:${issuer.issuer}#alice`, scopes: ['mcp:tools', 'profile'] });
  });

  it('keeps the same principal for the same subject with a fresh token, and another for another subject', async () => {
    const first = await server.authenticate(mcpRequest(await issuer.mint({ sub: 'alice' })));
    const fresh = await server.authenticate(mcpRequest(await issuer.mint({ sub: 'alice' }, { expiresIn: 900 })));
    const other = await server.authenticate(mcpRequest(await issuer.mint({ sub: 'bob' })));
    expect(first.ok && fresh.ok && other.ok).toBe(true);
    if (!first.ok || !fresh.ok || !other.ok) return;
    expect(fresh.principal).toBe(first.principal);
    expect(other.principal).not.toBe(first.principal);
  });

  it('names the kind in the principal, so an IAM ARN and an OAuth subject never collide', async () => {
    const arn = 'arn:aws:iam::123456789012:user/alice';
    const result = await server.authenticate(mcpRequest(await issuer.mint({ sub: arn })));
    expect(result.ok && result.principal).toBe(oauthPrincipal(issuer.issuer, arn));
    expect(oauthPrincipal(issuer.issuer, arn)).not.toBe(iamPrincipal(arn));
    expect(iamPrincipal(arn)).toBe(`iam:${arn}`);
  });

  it('tolerates 60 seconds of clock skew on exp and nbf', async () => {
    const justExpired = await issuer.mint({ exp: now() - 30 });
    const almostValid = await issuer.mint({ nbf: now() + 30 });
    expect((await server.authenticate(mcpRequest(justExpired))).ok).toBe(true);
    expect((await server.authenticate(mcpRequest(almostValid))).ok).toBe(true);
  });

  it('accepts ES256 and EdDSA keys as well as RS256', async () => {
    for (const algorithm of ['ES256', 'EdDSA'] as const) {
      const other = await startDevIssuer({ audience: RESOURCE, algorithm });
      try {
        const rs = createOAuthResourceServer({ issuer: other.issuer, resourceUrl: RESOURCE }, { logger: logs.logger });
        expect((await rs.authenticate(mcpRequest(await other.mint({ sub: 'carol' })))).ok).toBe(true);
      } finally {
        await other.close();
      }
    }
  });
});

describe('OAuth resource server: refusals', () => {
  it('answers a request without a token with 401 and resource_metadata, and no error code (RFC 6750 §3.1)', async () => {
    for (const request of [mcpRequest(), mcpRequest(undefined, 'Basic YWxpY2U6cHc=')]) {
      const result = await server.authenticate(request);
      if (result.ok) throw new Error('expected a refusal');
      expect(result.response.status).toBe(401);
      expect(result.response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${METADATA_URL}"`);
      expect(await result.response.json()).toEqual({ error: 'unauthorized', error_description: 'A bearer token is required' });
    }
  });

  it.each([
    ['an expired token', () => issuer.mint({ exp: now() - 120 }), 'The access token has expired'],
    ['a token for another audience', () => issuer.mint({ aud: 'https://other.example/mcp' }), 'The access token was not issued for this server'],
    ['a token without an audience', () => issuer.mint({ aud: undefined }), 'The access token lacks a required claim'],
    ['a token from another issuer', () => issuer.mint({ iss: 'https://other-issuer.example' }), 'The access token was not issued by the expected issuer'],
    ['a token not valid yet (nbf in the future)', () => issuer.mint({ nbf: now() + 600 }), 'The access token is not valid yet'],
    ['a token without exp', () => issuer.mint({ exp: undefined }), 'The access token lacks a required claim'],
    ['a token without sub', () => issuer.mint({ sub: undefined }), 'The access token lacks a required claim'],
    ['an ID token', () => issuer.mint({ token_use: 'id' }), 'An ID token is not an access token'],
  ])('answers %s with 401 invalid_token', async (_name, token, description) => {
    const { status, challenge } = await refusal(await token());
    expect(status).toBe(401);
    expect(challenge).toEqual({ error: 'invalid_token', error_description: description, resource_metadata: METADATA_URL });
  });

  it('refuses alg "none"', async () => {
    const unsigned = new UnsecuredJWT({ sub: 'mallory', aud: RESOURCE, iss: issuer.issuer }).setExpirationTime('5m').encode();
    const { status, challenge } = await refusal(unsigned);
    expect(status).toBe(401);
    expect(challenge.error).toBe('invalid_token');
  });

  it('refuses HS256 signed with the public key as the HMAC secret (algorithm confusion)', async () => {
    const publicPem = await exportSPKI((await importJWK(issuer.publicJwk(), 'RS256', { extractable: true })) as CryptoKey);
    const forged = await new SignJWT({ sub: 'mallory', aud: RESOURCE, iss: issuer.issuer })
      .setProtectedHeader({ alg: 'HS256', kid: issuer.currentKid })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(publicPem));
    const { status, challenge } = await refusal(forged);
    expect(status).toBe(401);
    expect(challenge.error_description).toBe('The access token signing algorithm is not accepted');
  });

  it('refuses a token with our iss and kid but signed by another key', async () => {
    const impostor = await startDevIssuer({ audience: RESOURCE });
    try {
      const header = JSON.parse(Buffer.from((await issuer.mint()).split('.')[0]!, 'base64url').toString());
      const forged = await impostor.mint({ iss: issuer.issuer, sub: 'alice' });
      // Swap in the real key id, keeping the impostor's signature.
      const [, payload, signature] = forged.split('.');
      const token = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${payload}.${signature}`;
      const { status, challenge } = await refusal(token);
      expect(status).toBe(401);
      expect(challenge.error_description).toBe('The access token signature is invalid');
    } finally {
      await impostor.close();
    }
  });

  it.each([
    ['not a JWT', 'abc'],
    ['a JWE-shaped value', 'a.b.c.d.e'],
    ['a value with characters outside b64token', 'a b'],
    ['a tampered payload', 'TAMPER'],
  ])('refuses %s with 401 invalid_token', async (_name, value) => {
    const token = value === 'TAMPER' ? (await issuer.mint()).replace(/\.([^.]+)\./, (_m, p: string) => `.${p.slice(0, -2)}AA.`) : value;
    const result = await server.authenticate(mcpRequest(undefined, `Bearer ${token}`));
    if (result.ok) throw new Error('expected a refusal');
    expect(result.response.status).toBe(401);
    expect(challengeParams(result.response.headers.get('www-authenticate')).error).toBe('invalid_token');
  });

  it('never puts the token in the response or the logs', async () => {
    const tokens = [await issuer.mint({ exp: now() - 600 }), await issuer.mint({ aud: 'https://elsewhere.example' })];
    for (const token of tokens) {
      const { text } = await refusal(token);
      expect(text).not.toContain(token.split('.')[1]);
    }
    expect(logs.lines.length).toBeGreaterThan(0);
    for (const token of tokens) for (const part of token.split('.')) expect(logs.lines.join('\n')).not.toContain(part);
  });
});

describe('OAuth resource server: scopes', () => {
  const scoped = () =>
    createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE, requiredScopes: ['mcp:tools', 'mcp:tasks'] }, { logger: logs.logger });

  it('answers a token without a required scope with 403 insufficient_scope naming the scopes', async () => {
    const result = await scoped().authenticate(mcpRequest(await issuer.mint({ scope: 'mcp:tools' })));
    if (result.ok) throw new Error('expected a refusal');
    expect(result.response.status).toBe(403);
    expect(challengeParams(result.response.headers.get('www-authenticate'))).toEqual({
      error: 'insufficient_scope',
      error_description: 'The access token lacks a required scope',
      scope: 'mcp:tools mcp:tasks',
      resource_metadata: METADATA_URL,
    });
    expect(await result.response.json()).toMatchObject({ error: 'insufficient_scope' });
  });

  it('accepts the scopes from `scope` (space-separated) or `scp` (array)', async () => {
    expect((await scoped().authenticate(mcpRequest(await issuer.mint({ scope: 'openid mcp:tasks mcp:tools' })))).ok).toBe(true);
    const viaScp = await scoped().authenticate(mcpRequest(await issuer.mint({ scp: ['mcp:tools', 'mcp:tasks'] })));
    expect(viaScp.ok && viaScp.scopes).toEqual(['mcp:tools', 'mcp:tasks']);
  });

  it('names the required scopes in the 401 challenge too', async () => {
    const result = await scoped().authenticate(mcpRequest());
    if (result.ok) throw new Error('expected a refusal');
    expect(challengeParams(result.response.headers.get('www-authenticate'))).toEqual({ scope: 'mcp:tools mcp:tasks', resource_metadata: METADATA_URL });
  });
});

describe('OAuth resource server: configuration', () => {
  it('refuses an http issuer on a host that is not loopback, at configuration time', () => {
    expect(() => createOAuthResourceServer({ issuer: 'http://auth.example.com', resourceUrl: RESOURCE }, { logger: logs.logger })).toThrow(OAuthConfigError);
    expect(() => createOAuthResourceServer({ issuer: 'http://auth.example.com', resourceUrl: RESOURCE }, { logger: logs.logger })).toThrow(
      /http.*not loopback/,
    );
  });

  it('checks the audience against the canonical resource URL unless one is configured', async () => {
    const custom = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE, audience: 'api://async-mcp' }, { logger: logs.logger });
    expect(custom.config.audience).toBe('api://async-mcp');
    expect((await custom.authenticate(mcpRequest(await issuer.mint({ aud: 'api://async-mcp' })))).ok).toBe(true);
    expect((await custom.authenticate(mcpRequest(await issuer.mint({ aud: RESOURCE })))).ok).toBe(false);
    expect(server.config.audience).toBe(RESOURCE);
  });
});

describe('dev issuer token endpoint', () => {
  it('grants client_credentials tokens whose sub is the client id and aud the RFC 8707 resource, which the server accepts', async () => {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'dave', resource: RESOURCE, scope: 'mcp:tools' });
    const answer = (await (await fetch(issuer.tokenEndpoint, { method: 'POST', body: form })).json()) as { access_token: string; token_type: string };
    expect(answer.token_type).toBe('Bearer');
    const result = await server.authenticate(mcpRequest(answer.access_token));
    expect(result).toEqual({ ok: true, principal: oauthPrincipal(issuer.issuer, 'dave'), scopes: ['mcp:tools'] });
  });
});

describe('bearerToken', () => {
  it('reads the Bearer scheme case-insensitively and ignores other schemes', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer   abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(null)).toBeUndefined();
    expect(bearerToken('Bearer a,b')).toBe('');
  });
});
