import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createOAuthResourceServer, type OAuthResourceServer } from '../../lambdas/auth/oauth-resource-server.ts';
import { JWKS_REFETCH_COOLDOWN_MS } from '../../lambdas/auth/token-verifier.ts';
import { startDevIssuer, type DevIssuer } from '../../local/oauth/dev-issuer.ts';

const RESOURCE = 'http://127.0.0.1:3000/mcp';
const silent = { error: () => undefined, warn: () => undefined };

let issuer: DevIssuer;
let server: OAuthResourceServer;

// Only Date is faked: jose's JWKS cooldown and the token clocks read it; sockets keep real timers.
beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  issuer = await startDevIssuer({ audience: RESOURCE });
  server = createOAuthResourceServer({ issuer: issuer.issuer, resourceUrl: RESOURCE }, { logger: silent });
});
afterEach(async () => {
  vi.useRealTimers();
  await issuer.close();
});

const jwksFetches = () => issuer.requestLog.filter((path) => path.endsWith('/jwks.json')).length;
const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);

async function accepted(token: string): Promise<boolean> {
  const result = await server.authenticate(new Request(RESOURCE, { headers: { authorization: `Bearer ${token}` } }));
  return result.ok;
}

describe('JWKS cache and key rotation', () => {
  it('refetches at most once a minute', () => {
    expect(JWKS_REFETCH_COOLDOWN_MS).toBe(60_000);
  });

  it('picks up a rotated key without a restart, refetching the JWKS for an unknown kid at most once a minute', async () => {
    expect(await accepted(await issuer.mint({ sub: 'alice' }))).toBe(true);
    expect(jwksFetches()).toBe(1);

    // 45 s after the first fetch (past jose's 30 s default, within our minute), a new kid is refused without asking the issuer.
    advance(45_000);
    await issuer.rotateKey();
    for (let i = 0; i < 20; i++) expect(await accepted(await issuer.mint({ sub: 'alice' }))).toBe(false);
    expect(jwksFetches()).toBe(1);

    // Once the minute has passed, the unknown kid triggers one refetch and the new key works.
    advance(JWKS_REFETCH_COOLDOWN_MS - 45_000 + 1);
    expect(await accepted(await issuer.mint({ sub: 'alice' }))).toBe(true);
    expect(jwksFetches()).toBe(2);

    // A flood of tokens with yet another unknown kid right after: still no extra fetch.
    advance(1_000);
    await issuer.rotateKey();
    const flood = await Promise.all(Array.from({ length: 20 }, async () => accepted(await issuer.mint())));
    expect(flood.every((ok) => !ok)).toBe(true);
    expect(jwksFetches()).toBe(2);
  });

  it('keeps accepting tokens signed with a known key without refetching', async () => {
    for (let i = 0; i < 10; i++) {
      expect(await accepted(await issuer.mint({ sub: `user-${i}` }))).toBe(true);
      advance(20_000);
    }
    // 200 s passed, less than the ten-minute cache age: one fetch.
    expect(jwksFetches()).toBe(1);
  });

  it('stops accepting a retired key once the JWKS has been refetched', async () => {
    const oldKid = issuer.currentKid;
    expect(await accepted(await issuer.mint())).toBe(true);
    await issuer.rotateKey({ retirePrevious: true });
    advance(JWKS_REFETCH_COOLDOWN_MS + 1);
    expect(await accepted(await issuer.mint())).toBe(true);
    expect(await accepted(await issuer.mint({}, { kid: oldKid }))).toBe(false);
  });
});
