/**
 * The SigV4 check of an AWS_IAM Function URL: the signature is recomputed (by the IAM
 * gateways' verifier, with @smithy/signature-v4) over the headers the client says it signed, with the secret of the
 * access key it names, and must match. Lambda allows requests signed for service `lambda` in the
 * URL's Region only, and no more than 15 minutes away from now.
 */
import type { IncomingMessage } from 'node:http';
import { verifySigV4 as verifyResignedSigV4 } from '../iam/sigv4-verifier.ts';
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
const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})$/;

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
  const [, accessKeyId, day, scopeRegion, service, signedHeaderList] = match as unknown as [string, string, string, string, string, string];
  if (service !== 'lambda' || scopeRegion !== region) return { ok: false, reason: `signed for ${scopeRegion}/${service}, not ${region}/lambda` };

  const amzDate = single(request.headers['x-amz-date']);
  const signingDate = amzDate ? parseAmzDate(amzDate) : undefined;
  if (!amzDate || !signingDate || amzDate.slice(0, 8) !== day) return { ok: false, reason: 'no valid X-Amz-Date matching the credential scope' };
  if (Math.abs((options.now ?? new Date()).getTime() - signingDate.getTime()) > MAX_SKEW_MS) return { ok: false, reason: 'Signature expired' };

  const caller = callerOf(authority, accessKeyId);
  if (!caller) return { ok: false, reason: `unknown access key ${accessKeyId}` };
  const sessionToken = single(request.headers['x-amz-security-token']);
  if (caller.sessionToken !== undefined && sessionToken !== caller.sessionToken)
    return { ok: false, reason: 'The security token included in the request is invalid' };

  const signedNames = signedHeaderList.split(';');
  if (!signedNames.includes('host')) return { ok: false, reason: 'the host header is not signed' };
  const headers: Record<string, string | undefined> = {};
  for (const name of signedNames) {
    const value = request.headers[name];
    if (value === undefined) return { ok: false, reason: `signed header ${name} is missing` };
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  headers.authorization = authorization;
  headers['x-amz-date'] = amzDate;
  if (sessionToken !== undefined) headers['x-amz-security-token'] = sessionToken;
  const [rawPath, rawQuery = ''] = (request.url ?? '/').split('?', 2) as [string, string?];
  // The re-signing itself is the IAM gateways' verifier: one SigV4 check for every local endpoint.
  const resigned = await verifyResignedSigV4(
    { method: request.method ?? 'GET', host: headers.host ?? '', path: rawPath, query: new URLSearchParams(rawQuery), headers, body },
    {
      service: 'lambda',
      region,
      lookup: () => ({ secretAccessKey: caller.secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }),
      ...(options.now ? { now: options.now } : {}),
    },
  );
  if (!resigned.ok) return { ok: false, reason: 'The request signature we calculated does not match the signature you provided' };
  return { ok: true, caller: caller.identity };
}

function callerOf(authority: SigV4Authority, accessKeyId: string): { secretAccessKey: string; sessionToken?: string; identity: FunctionUrlCaller } | undefined {
  const local = authority.localCaller;
  if (accessKeyId === local.accessKeyId) {
    return {
      secretAccessKey: local.secretAccessKey,
      identity: { accessKey: accessKeyId, accountId: local.accountId, userId: local.userId, userArn: local.assumedRoleArn },
    };
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
