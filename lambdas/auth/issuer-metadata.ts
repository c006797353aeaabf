/**
 * Authorization-server metadata discovery: RFC 8414 first, OpenID Connect Discovery as the
 * fallback, in the order the MCP spec ("Authorization Server Metadata Discovery") gives.
 */
import { isObject } from '../shared/json-values.ts';
import { isSecureOrLoopback } from './oauth-config.ts';

/** The fields of the issuer's metadata this server uses. */
export interface IssuerMetadata {
  issuer: string;
  jwksUri: string;
  /** Which document answered, for logs. */
  source: string;
}

/** Discovery found no usable metadata document; `message` lists what each URL answered. */
export class IssuerDiscoveryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IssuerDiscoveryError';
  }
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

const FETCH_TIMEOUT_MS = 5_000;
const MAX_METADATA_BYTES = 256 * 1024;

/**
 * The metadata URLs to try, in order. For an issuer with a path (`https://as/tenant1`):
 * RFC 8414 path insertion, OIDC path insertion, OIDC path appending (Amazon Cognito and
 * most OIDC providers answer only the last). Without a path: RFC 8414, then OIDC.
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  // RFC 8414 §3.1: a terminating "/" is removed before the well-known segment is inserted.
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '') {
    return [`${url.origin}/.well-known/oauth-authorization-server`, `${url.origin}/.well-known/openid-configuration`];
  }
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}

/**
 * Fetches the issuer's metadata, trying each URL in turn. A document is used only when its
 * `issuer` is identical to the configured one (RFC 8414 §3.3; OIDC Discovery §4.3) and its
 * `jwks_uri` is https (http only on loopback).
 */
export async function fetchIssuerMetadata(issuer: string, fetchImpl: FetchLike = fetch): Promise<IssuerMetadata> {
  const refusals: string[] = [];
  for (const url of metadataUrls(issuer)) {
    const answer = await fetchJsonObject(url, fetchImpl);
    if (!answer.ok) {
      refusals.push(`${url}: ${answer.reason}`);
      continue;
    }
    const { document } = answer;
    if (document.issuer !== issuer) {
      refusals.push(`${url}: its issuer is ${JSON.stringify(document.issuer)}, not ${JSON.stringify(issuer)}`);
      continue;
    }
    const jwksUri = typeof document.jwks_uri === 'string' ? safeUrl(document.jwks_uri) : undefined;
    if (!jwksUri) {
      refusals.push(`${url}: no https jwks_uri`);
      continue;
    }
    return { issuer, jwksUri, source: url };
  }
  throw new IssuerDiscoveryError(`No usable authorization server metadata for ${issuer}: ${refusals.join('; ')}`);
}

async function fetchJsonObject(url: string, fetchImpl: FetchLike): Promise<{ ok: true; document: Record<string, unknown> } | { ok: false; reason: string }> {
  let response: Response;
  try {
    // Redirects are not followed: the issuer check below must be about the URL we asked.
    response = await fetchImpl(url, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    return { ok: false, reason: `${(error as Error).name}: ${(error as Error).message}` };
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, reason: `HTTP ${response.status}` };
  }
  const text = await response.text().catch(() => undefined);
  if (text === undefined || text.length > MAX_METADATA_BYTES) return { ok: false, reason: 'unreadable or oversized body' };
  try {
    const document: unknown = JSON.parse(text);
    return isObject(document) ? { ok: true, document } : { ok: false, reason: 'not a JSON object' };
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
}

function safeUrl(value: string): string | undefined {
  try {
    const url = new URL(value);
    return isSecureOrLoopback(url) && !url.username && !url.password ? url.href : undefined;
  } catch {
    return undefined;
  }
}
