/**
 * AWS Signature Version 4 for requests to IAM-authenticated Lambda Function URLs (service
 * `lambda`), signed with @smithy/signature-v4 and credentials from the default provider
 * chain. Like botocore's signer for non-S3 services, it adds no `x-amz-content-sha256` header.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { FetchLike } from './mcp-connection.ts';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigV4Options {
  /** @default the Region in a Function URL's host name, else `AWS_REGION` / `AWS_DEFAULT_REGION` */
  region?: string;
  /** @default 'lambda' */
  service?: string;
  /** @default the AWS SDK's default provider chain (environment, profile, SSO, container, instance) */
  credentials?: AwsCredentials | (() => Promise<AwsCredentials>);
  /** The signing clock. @default the current time */
  now?: () => Date;
}

export interface RequestToSign {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

type SourceData = string | ArrayBuffer | ArrayBufferView;

/** SHA-256 (or HMAC-SHA-256 with a secret) from node:crypto, in the shape the signer expects. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  update(data: SourceData): void {
    this.hash.update(toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(this.secret));
  }
}

function toBytes(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** The Region of a Function URL (`<id>.lambda-url.<region>.on.aws`). */
export function regionOfFunctionUrl(url: string): string | undefined {
  return /\.lambda-url\.([a-z0-9-]+)\.on\.aws$/.exec(new URL(url).hostname)?.[1];
}

let smithy: Promise<[typeof import('@smithy/protocol-http'), typeof import('@smithy/signature-v4')]> | undefined;

/**
 * The signer's packages, loaded by the first request signed: a bearer or anonymous client (the
 * CLI's every start included) never loads them, and they were a fifth of the CLI's start-up CPU.
 */
function smithySigner() {
  smithy ??= Promise.all([import('@smithy/protocol-http'), import('@smithy/signature-v4')]);
  return smithy;
}

let defaultChain: Promise<() => Promise<AwsCredentials>> | undefined;

/**
 * Credentials from the AWS default chain, resolved by one provider per process: the
 * chain caches what it resolved (and refreshes it before it expires), so a run of
 * requests makes one AssumeRole or credential_process call, not one each.
 */
async function defaultCredentials(): Promise<AwsCredentials> {
  // Loaded only when signing, so that bearer and anonymous use never load the AWS SDK.
  defaultChain ??= import('@aws-sdk/credential-provider-node').then(({ defaultProvider }) => defaultProvider());
  return (await defaultChain)();
}

/** The headers to send: the request's own plus `host`, `x-amz-date`, `authorization` (and `x-amz-security-token`). */
export async function signRequest(request: RequestToSign, options: SigV4Options = {}): Promise<Record<string, string>> {
  const url = new URL(request.url);
  const region = options.region ?? regionOfFunctionUrl(request.url) ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region) throw new Error('SigV4: no Region (not a Function URL; pass a region or set AWS_REGION)');
  const credentials =
    typeof options.credentials === 'function' ? options.credentials : async () => (options.credentials as AwsCredentials | undefined) ?? defaultCredentials();
  const [{ HttpRequest }, { SignatureV4 }] = await smithySigner();
  const signer = new SignatureV4({ service: options.service ?? 'lambda', region, credentials, sha256: NodeSha256, applyChecksum: false });
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const existing = query[key];
    query[key] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  const lowerHeaders = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const httpRequest = new HttpRequest({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query,
    headers: { ...lowerHeaders, host: url.host },
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const signed = await signer.sign(httpRequest, { signingDate: options.now?.() ?? new Date() });
  return signed.headers as Record<string, string>;
}

/** A fetch that signs every request it sends. */
export function sigV4Fetch(options: SigV4Options = {}, base: FetchLike = (input, init) => fetch(input, init)): FetchLike {
  return async (input, init) => {
    const body = typeof init.body === 'string' ? init.body : undefined;
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const signed = await signRequest({ method: init.method ?? 'GET', url: input, headers, ...(body === undefined ? {} : { body }) }, options);
    // fetch sets Host itself, from the URL that was signed.
    const { host: _host, ...rest } = signed;
    return base(input, { ...init, headers: rest });
  };
}
