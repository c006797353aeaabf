/**
 * The SigV4 check of an AWS_IAM Function URL: the signature is recomputed with
 * @smithy/signature-v4 over the headers the client says it signed, with the secret of the
 * access key it names, and must match. Lambda allows requests signed for service `lambda` in the
 * URL's Region only, and no more than 15 minutes away from now.
 */
import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { FunctionUrlCaller } from './function-url-event.ts';

/** Who holds which key (the IAM authority's `localCaller` and `identify`). */
export interface SigV4Authority {
  readonly localCaller: { accessKeyId: string; secretAccessKey: string; assumedRoleArn: string; userId: string; accountId: string };
  identify?(accessKeyId: string): { roleArn: string; assumedRoleArn: string; sessionName: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

export interface SigV4Options {
  /** @default 'us-east-1' */
  region?: string;
  /** @default the current time */
  now?: Date;
}

const MAX_SKEW_MS = 15 * 60 * 1000;
const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})$/;

/** The caller the signature proves, or why there is none. */
export async function verifySigV4(
  request: IncomingMessage,
  body: Buffer,
  authority: SigV4Authority,
  options: SigV4Options = {},
): Promise<{ ok: true; caller: FunctionUrlCaller } | { ok: false; reason: string }> {
  const region = options.region ?? 'us-east-1';
  const authorization = single(request.headers.authorization);
  if (!authorization) return { ok: false, reason: 'no Authorization header (the URL is AWS_IAM: sign requests with SigV4, service lambda)' };
  const match = AUTHORIZATION.exec(authorization);
  if (!match) return { ok: false, reason: 'the Authorization header is not an AWS4-HMAC-SHA256 signature' };
  const [, accessKeyId, day, scopeRegion, service, signedHeaderList, signature] = match as unknown as [string, string, string, string, string, string, string];
  if (service !== 'lambda' || scopeRegion !== region) return { ok: false, reason: `signed for ${scopeRegion}/${service}, not ${region}/lambda` };

  const amzDate = single(request.headers['x-amz-date']);
  const signingDate = amzDate ? parseAmzDate(amzDate) : undefined;
  if (!signingDate || amzDate!.slice(0, 8) !== day) return { ok: false, reason: 'no valid X-Amz-Date matching the credential scope' };
  if (Math.abs((options.now ?? new Date()).getTime() - signingDate.getTime()) > MAX_SKEW_MS) return { ok: false, reason: 'Signature expired' };

  const caller = callerOf(authority, accessKeyId);
  if (!caller) return { ok: false, reason: `unknown access key ${accessKeyId}` };
  const sessionToken = single(request.headers['x-amz-security-token']);
  if (caller.sessionToken !== undefined && sessionToken !== caller.sessionToken) return { ok: false, reason: 'The security token included in the request is invalid' };

  const signedNames = signedHeaderList.split(';');
  if (!signedNames.includes('host')) return { ok: false, reason: 'the host header is not signed' };
  const headers: Record<string, string> = {};
  for (const name of signedNames) {
    const value = request.headers[name];
    if (value === undefined) return { ok: false, reason: `signed header ${name} is missing` };
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const target = new URL(request.url ?? '/', 'http://localhost');
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of target.searchParams) {
    const existing = query[key];
    query[key] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  const signer = new SignatureV4({
    service: 'lambda',
    region,
    credentials: { accessKeyId, secretAccessKey: caller.secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
    sha256: NodeSha256,
    applyChecksum: false,
  });
  const rawPath = (request.url ?? '/').split('?', 1)[0]!;
  const resigned = await signer.sign(
    new HttpRequest({ method: request.method ?? 'GET', protocol: 'http:', hostname: headers.host!.split(':')[0]!, path: rawPath, query, headers, body }),
    { signingDate },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(resigned.headers.authorization))?.[1] ?? '';
  if (expected.length !== signature.length || !timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) {
    return { ok: false, reason: 'The request signature we calculated does not match the signature you provided' };
  }
  return { ok: true, caller: caller.identity };
}

function callerOf(authority: SigV4Authority, accessKeyId: string): { secretAccessKey: string; sessionToken?: string; identity: FunctionUrlCaller } | undefined {
  const local = authority.localCaller;
  if (accessKeyId === local.accessKeyId) {
    return { secretAccessKey: local.secretAccessKey, identity: { accessKey: accessKeyId, accountId: local.accountId, userId: local.userId, userArn: local.assumedRoleArn } };
  }
  const session = authority.identify?.(accessKeyId);
  if (!session) return undefined;
  const accountId = session.assumedRoleArn.split(':')[4] ?? local.accountId;
  // An assumed role's unique id is its role id and the session name; locally the role's name stands in for the id.
  const userId = `${session.roleArn.split('/').pop()}:${session.sessionName}`;
  return {
    secretAccessKey: session.secretAccessKey,
    ...(session.sessionToken === undefined ? {} : { sessionToken: session.sessionToken }),
    identity: { accessKey: accessKeyId, accountId, userId, userArn: session.assumedRoleArn },
  };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** 20260101T120000Z → Date. */
function parseAmzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s));
}

type SourceData = string | ArrayBuffer | ArrayBufferView;

/** SHA-256 and HMAC-SHA-256 from node:crypto, in the shape the signer takes. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
}

function bytes(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
