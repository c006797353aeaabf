/**
 * Verifies an AWS Signature Version 4 `Authorization` header the way a service does: parse the
 * credential scope and signed headers, re-sign the same canonical request with the key's secret
 * using the SDK's own signer, and compare. As AWS does, a signing date more than 15 minutes
 * from now is refused whatever the signature.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

/** The parts of `Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`. */
export interface ParsedAuthorization {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

/** The request as received. */
export interface SignedRequest {
  method: string;
  /** Host header value, port included. */
  host: string;
  /** The path as sent (percent-encoded), without the query. */
  path: string;
  query: URLSearchParams;
  /** Lower-cased names. */
  headers: Record<string, string | undefined>;
  /** The body when the signature covers it; absent when `x-amz-content-sha256` names the payload hash. */
  body?: Uint8Array;
}

export type VerifyResult =
  | { ok: true; authorization: ParsedAuthorization }
  | { ok: false; problem: 'missing' | 'malformed' | 'unknown-key' | 'bad-token' | 'mismatch' | 'wrong-scope'; authorization?: ParsedAuthorization }
  /** The signing date is more than 15 minutes from now; `message` is the JSON services' text for it. */
  | { ok: false; problem: 'expired'; authorization: ParsedAuthorization; message: string };

/** How far a signing date may be from the service's clock. */
const MAX_SKEW_MS = 15 * 60 * 1000;

/** Node's crypto as the signer's hash constructor. */
export class NodeSha256 {
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  private readonly secret: string | Uint8Array | undefined;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.secret = secret === undefined || typeof secret === 'string' ? secret : toBytes(secret);
    this.hash = this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(typeof data === 'string' ? data : toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
}

function toBytes(data: ArrayBuffer | ArrayBufferView): Uint8Array {
  return data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** Parses a SigV4 Authorization header, or undefined when it is not one. */
export function parseAuthorization(header: string | undefined): ParsedAuthorization | undefined {
  const fields = /^AWS4-HMAC-SHA256\s+(.*)$/.exec(header ?? '')?.[1];
  if (fields === undefined) return undefined;
  const parts = Object.fromEntries(
    fields.split(',').map((part) => {
      const eq = part.indexOf('=');
      return [part.slice(0, eq).trim(), part.slice(eq + 1).trim()];
    }),
  );
  const credential = (parts.Credential ?? '').split('/');
  const [accessKeyId, date, region, service, terminator] = credential;
  if (credential.length !== 5 || terminator !== 'aws4_request' || !parts.SignedHeaders || !parts.Signature) return undefined;
  if (accessKeyId === undefined || date === undefined || region === undefined || service === undefined) return undefined;
  return {
    accessKeyId,
    date,
    region,
    service,
    signedHeaders: parts.SignedHeaders.split(';'),
    signature: parts.Signature,
  };
}

/**
 * Checks the request's signature for `service` with the secret `lookup` returns for its key (and,
 * for session credentials, that it carries the session's token).
 */
export async function verifySigV4(
  request: SignedRequest,
  options: {
    service: string;
    region?: string;
    lookup: (accessKeyId: string) => { secretAccessKey: string; sessionToken?: string } | undefined;
    /** S3 signs the path as sent; other services encode it once more. @default true */
    uriEscapePath?: boolean;
    /** The service's clock. @default the current time */
    now?: Date;
  },
): Promise<VerifyResult> {
  if (request.headers.authorization === undefined) return { ok: false, problem: 'missing' };
  const authorization = parseAuthorization(request.headers.authorization);
  if (!authorization) return { ok: false, problem: 'malformed' };
  if (authorization.service !== options.service || (options.region && authorization.region !== options.region)) {
    return { ok: false, problem: 'wrong-scope', authorization };
  }
  const key = options.lookup(authorization.accessKeyId);
  if (!key) return { ok: false, problem: 'unknown-key', authorization };
  if (key.sessionToken !== undefined && request.headers['x-amz-security-token'] !== key.sessionToken) {
    return { ok: false, problem: 'bad-token', authorization };
  }
  const amzDate = request.headers['x-amz-date'];
  const signingDate = amzDate ? parseAmzDate(amzDate) : request.headers.date ? new Date(request.headers.date) : undefined;
  if (!signingDate || Number.isNaN(signingDate.getTime())) return { ok: false, problem: 'malformed', authorization };
  const expired = expiryMessage(signingDate, options.now ?? new Date());
  if (expired) return { ok: false, problem: 'expired', authorization, message: expired };

  const headers: Record<string, string> = {};
  for (const name of authorization.signedHeaders) {
    const value = name === 'host' ? request.host : request.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of request.query) {
    const existing = query[name];
    query[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  const [hostname, port] = splitHost(request.host);
  const signer = new SignatureV4({
    service: authorization.service,
    region: authorization.region,
    credentials: {
      accessKeyId: authorization.accessKeyId,
      secretAccessKey: key.secretAccessKey,
      ...(key.sessionToken ? { sessionToken: key.sessionToken } : {}),
    },
    sha256: NodeSha256,
    uriEscapePath: options.uriEscapePath ?? true,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    new HttpRequest({
      method: request.method,
      protocol: 'http:',
      hostname,
      ...(port ? { port } : {}),
      path: request.path,
      query,
      headers,
      ...(request.body !== undefined && headers['x-amz-content-sha256'] === undefined ? { body: request.body } : {}),
    }),
    { signingDate, signableHeaders: new Set(authorization.signedHeaders) },
  );
  const expected = parseAuthorization(signed.headers.authorization)?.signature ?? '';
  const a = Buffer.from(expected);
  const b = Buffer.from(authorization.signature);
  if (a.length !== b.length || !timingSafeEqual(a, b)) return { ok: false, problem: 'mismatch', authorization };
  // A named payload hash is signed in place of the body, so the body must be the one it names.
  return namesOtherBody(headers['x-amz-content-sha256'], request.body) ? { ok: false, problem: 'mismatch', authorization } : { ok: true, authorization };
}

/** Whether `named` is a hex SHA-256 that `body` does not have (S3's UNSIGNED-PAYLOAD and STREAMING-* name none). */
function namesOtherBody(named: string | undefined, body: Uint8Array | undefined): boolean {
  if (named === undefined || body === undefined || !/^[0-9a-f]{64}$/i.test(named)) return false;
  return named.toLowerCase() !== createHash('sha256').update(body).digest('hex');
}

/**
 * AWS's text for a signing date outside 15 minutes of now, or `undefined` within them:
 * "Signature expired: <signed> is now earlier than <now - 15 min> (<now> - 15 min.)", and
 * "Signature not yet current: <signed> is still later than <now + 15 min> (<now> + 15 min.)".
 */
function expiryMessage(signingDate: Date, now: Date): string | undefined {
  const signed = amzDateOf(signingDate);
  if (signingDate.getTime() < now.getTime() - MAX_SKEW_MS) {
    return `Signature expired: ${signed} is now earlier than ${amzDateOf(new Date(now.getTime() - MAX_SKEW_MS))} (${amzDateOf(now)} - 15 min.)`;
  }
  if (signingDate.getTime() > now.getTime() + MAX_SKEW_MS) {
    return `Signature not yet current: ${signed} is still later than ${amzDateOf(new Date(now.getTime() + MAX_SKEW_MS))} (${amzDateOf(now)} + 15 min.)`;
  }
  return undefined;
}

/** Date -> `20261201T103000Z`. */
function amzDateOf(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** `20261201T103000Z` -> Date. */
function parseAmzDate(value: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const [year, month, day, hours, minutes, seconds] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return new Date(Date.UTC(year, month - 1, day, hours, minutes, seconds));
}

function splitHost(host: string): [string, number | undefined] {
  // The pattern matches every string: group 1 may be empty, the port is optional.
  const [, name = '', port] = /^(.*?)(?::(\d+))?$/.exec(host) ?? [];
  return [name, port ? Number(port) : undefined];
}
