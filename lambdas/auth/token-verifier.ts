/**
 * Access-token verification with jose: the issuer's keys are discovered on first use,
 * cached, and refetched when a token names a key the cache lacks (at most once a
 * minute), so the issuer can rotate keys without a restart here. jose is loaded on the
 * first verification: a server without OAuth never loads it.
 */
import type { JWTPayload } from 'jose';
import { fetchIssuerMetadata, IssuerDiscoveryError, type FetchLike, type IssuerMetadata } from './issuer-metadata.ts';
import type { ResolvedOAuthConfig } from './oauth-config.ts';

/** Asymmetric algorithms only: `none` and the HS* family (a shared secret) are refused. */
export const ACCEPTED_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;
/** Seconds of clock difference tolerated on `exp` and `nbf`. */
export const CLOCK_SKEW_SECONDS = 60;
/** A token naming an unknown `kid` refetches the JWKS at most this often (jose `cooldownDuration`). */
export const JWKS_REFETCH_COOLDOWN_MS = 60_000;
/** After a failed discovery, requests fail fast for this long instead of each asking the issuer again. */
export const DISCOVERY_RETRY_MS = 10_000;
/** Longer bearer values are refused unread (a JWT from a real issuer is a few KB). */
export const MAX_TOKEN_CHARS = 16 * 1024;

const JWS_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

type Jose = typeof import('jose');
let jose: Promise<Jose> | undefined;
const loadJose = (): Promise<Jose> => (jose ??= import('jose'));

/** Why a token was refused; the description is short, fixed text, never token content. */
export type TokenRejection = { kind: 'invalid_token'; description: string };

export type VerifyResult =
  | { ok: true; issuer: string; subject: string; scopes: string[] }
  | { ok: false; rejection: TokenRejection }
  /** Our side failed (issuer or JWKS unreachable, bad metadata): not the caller's fault. */
  | { ok: false; unavailable: Error };

export interface TokenVerifier {
  verify(token: string): Promise<VerifyResult>;
}

export interface TokenVerifierOptions {
  /** @default globalThis.fetch */
  fetch?: FetchLike;
}

/** A verifier for one issuer and audience. Nothing is fetched until the first `verify`. */
export function createTokenVerifier(config: ResolvedOAuthConfig, options: TokenVerifierOptions = {}): TokenVerifier {
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  let keys: Promise<ReturnType<Jose['createRemoteJWKSet']>> | undefined;
  let failedDiscovery: { at: number; error: Error } | undefined;

  const keySet = (): Promise<ReturnType<Jose['createRemoteJWKSet']>> => {
    if (failedDiscovery && Date.now() - failedDiscovery.at < DISCOVERY_RETRY_MS) return Promise.reject(failedDiscovery.error);
    keys ??= Promise.all([fetchIssuerMetadata(config.issuer, fetchImpl), loadJose()]).then(
      ([metadata, { createRemoteJWKSet, customFetch }]: [IssuerMetadata, Jose]) =>
        createRemoteJWKSet(new URL(metadata.jwksUri), {
          cooldownDuration: JWKS_REFETCH_COOLDOWN_MS,
          [customFetch]: jwksFetch(fetchImpl),
        }),
      (error: Error) => {
        // Forget the failure so a later request retries; until then, fail fast.
        keys = undefined;
        failedDiscovery = { at: Date.now(), error };
        throw error;
      },
    );
    return keys;
  };

  return {
    async verify(token) {
      if (token.length > MAX_TOKEN_CHARS) return reject('The access token is too long');
      // Not a compact JWS at all: refused before it can make us contact the issuer.
      if (!JWS_SHAPE.test(token)) return reject('The access token is malformed');
      let jwks: Awaited<ReturnType<typeof keySet>>;
      try {
        jwks = await keySet();
      } catch (error) {
        return { ok: false, unavailable: error as Error };
      }
      const { jwtVerify, errors } = await loadJose();
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, jwks, {
          issuer: config.issuer,
          audience: config.audience,
          algorithms: [...ACCEPTED_ALGORITHMS],
          clockTolerance: CLOCK_SKEW_SECONDS,
          // A token without `exp` would never expire; `sub` names the principal.
          requiredClaims: ['exp', 'sub'],
        }));
      } catch (error) {
        return classify(error, errors);
      }
      if (typeof payload.sub !== 'string' || payload.sub === '') return reject('The access token has no subject');
      // An OpenID ID token is not an access token (Amazon Cognito marks them; RFC 9068 §2.2 uses typ).
      if (payload.token_use === 'id') return reject('An ID token is not an access token');
      return { ok: true, issuer: config.issuer, subject: payload.sub, scopes: scopesOf(payload) };
    },
  };
}

/** Granted scopes: `scope` (RFC 8693 / RFC 9068, space-separated) and `scp` (array or string). */
export function scopesOf(payload: JWTPayload): string[] {
  const scopes = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value === 'string') for (const scope of value.split(' ')) if (scope) scopes.add(scope);
    if (Array.isArray(value)) for (const scope of value) if (typeof scope === 'string' && scope) scopes.add(scope);
  };
  add(payload.scope);
  add(payload.scp);
  return [...scopes];
}

/** JWKS unavailable: distinguished from a bad token, which jose reports as a JOSEError. */
class JwksUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JwksUnavailableError';
  }
}

// jose turns an unreachable JWKS into a generic JOSEError; fail here first with our own error.
function jwksFetch(fetchImpl: FetchLike) {
  return async (url: string, init: RequestInit): Promise<Response> => {
    let response: Response;
    try {
      response = await fetchImpl(url, init);
    } catch (error) {
      throw new JwksUnavailableError(`JWKS fetch failed: ${(error as Error).name}`, { cause: error });
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new JwksUnavailableError(`JWKS answered HTTP ${response.status}`);
    }
    const text = await response.text();
    try {
      JSON.parse(text);
    } catch (error) {
      throw new JwksUnavailableError('JWKS is not JSON', { cause: error });
    }
    return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

function classify(error: unknown, errors: Jose['errors']): VerifyResult {
  if (error instanceof JwksUnavailableError || error instanceof IssuerDiscoveryError) return { ok: false, unavailable: error };
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return { ok: false, unavailable: error };
  if (error instanceof errors.JWTExpired) return reject('The access token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') return reject('The access token lacks a required claim');
    if (error.claim === 'iss') return reject('The access token was not issued by the expected issuer');
    if (error.claim === 'aud') return reject('The access token was not issued for this server');
    if (error.claim === 'nbf') return reject('The access token is not valid yet');
    return reject('The access token has an invalid claim');
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return reject('The access token signing algorithm is not accepted');
  if (error instanceof errors.JWKSNoMatchingKey) return reject('The access token was signed with an unknown key');
  if (error instanceof errors.JWSSignatureVerificationFailed) return reject('The access token signature is invalid');
  if (error instanceof errors.JOSEError) return reject('The access token is malformed');
  return { ok: false, unavailable: error instanceof Error ? error : new Error(String(error)) };
}

function reject(description: string): VerifyResult {
  return { ok: false, rejection: { kind: 'invalid_token', description } };
}
