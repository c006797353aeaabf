/**
 * SigV4 for the hot calls (hot-call.ts: the poll's GetItem, a start's writes and its
 * StartExecution), synchronous and over node:crypto: the same signature `@smithy/signature-v4`
 * computes for the request a hot call builds (a POST to a plain path, no query, lower-case
 * header names), at a quarter of its cost. The SDK's signer
 * is general: it clones the request, awaits a hash object per digest and walks every header
 * against its unsignable list, about 30 µs a poll on a quiet core and three times that under
 * load. Here one SHA-256 of the body, one of the canonical request and one HMAC, with the
 * signing key kept per day, region and secret.
 *
 * As the SDK's signer does, it adds `x-amz-date`, `x-amz-content-sha256` (the body's hash)
 * and, with temporary credentials, `x-amz-security-token`, and signs every header the
 * request then has. The parity test (test/unit/hot-read-signer.test.ts) holds it to the
 * SDK's signature; a request it does not take (a path needing escapes, a query) throws, and
 * the hot read then falls back to the SDK path.
 */
import { createHash, createHmac } from 'node:crypto';

/** What the signer reads of a request (hot-get-item.ts's HotRequest has these and more). */
export interface SignableRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The identity a request is signed with, as the SDK's credential providers answer it. */
export interface SigningCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

/** Headers SigV4 signers leave unsigned; the hot read sends none of them. */
const UNSIGNABLE = new Set([
  'authorization',
  'cache-control',
  'connection',
  'expect',
  'from',
  'keep-alive',
  'max-forwards',
  'pragma',
  'referer',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'x-amzn-trace-id',
]);

/** The last signing key derived per service: a Lambda, and a local server, sign with one identity per day. */
const lastKeys = new Map<string, { day: string; region: string; secret: string; key: Buffer }>();

/** `request` with its SigV4 headers (`service`, `region`) added, signed at `signingDate`. */
export function signHotRequest<R extends SignableRequest>(
  request: R,
  credentials: SigningCredentials,
  region: string,
  signingDate: Date,
  service = 'dynamodb',
): R {
  if (!isPlainPath(request.path)) throw new Error('the hot read signs plain paths only');
  if (Object.keys(request.query).length > 0) throw new Error('the hot read signs requests without a query');
  const amzDate = amzDateOf(signingDate);
  const day = amzDate.slice(0, 8);
  const payloadHash = createHash('sha256').update(request.body).digest('hex');
  // Entries, not a spread object: a spread of dashed keys goes to dictionary mode, several times slower to sort.
  const entries = Object.entries(request.headers);
  entries.push(['x-amz-date', amzDate], ['x-amz-content-sha256', payloadHash]);
  if (credentials.sessionToken) entries.push(['x-amz-security-token', credentials.sessionToken]);
  entries.sort(byName);

  const headers: Record<string, string> = {};
  const names: string[] = [];
  let canonicalHeaders = '';
  for (const [name, value] of entries) {
    if (name !== name.toLowerCase() || UNSIGNABLE.has(name)) throw new Error(`the hot read does not sign a header named ${name}`);
    headers[name] = value;
    names.push(name);
    canonicalHeaders += `${name}:${value.trim().replace(/\s+/g, ' ')}\n`;
  }
  const signedHeaders = names.join(';');
  const canonicalRequest = `${request.method}\n${request.path}\n\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = `${ALGORITHM}\n${amzDate}\n${scope}\n${createHash('sha256').update(canonicalRequest).digest('hex')}`;
  const signature = createHmac('sha256', signingKey(day, region, service, credentials.secretAccessKey))
    .update(stringToSign)
    .digest('hex');
  headers.authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { ...request, headers };
}

const byName = (a: [string, string], b: [string, string]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** The last second formatted as SigV4's basic ISO 8601 (`20261203T120000Z`): polls sign many per second. */
let lastDate: { second: number; text: string } | undefined;

function amzDateOf(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (lastDate?.second !== second)
    lastDate = {
      second,
      text: date
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z')
        .replace(/[-:]/g, ''),
    };
  return lastDate.text;
}

/**
 * A path SigV4's canonical form leaves as it is: "/" or "/"-separated segments of unreserved
 * characters, none empty (but a trailing slash) and none "." or "..", which it would normalize.
 */
export function isPlainPath(path: string): boolean {
  if (!path.startsWith('/')) return false;
  const segments = path.slice(1).split('/');
  if (segments.at(-1) === '') segments.pop();
  return segments.every((segment) => /^[A-Za-z0-9\-._~]+$/.test(segment) && segment !== '.' && segment !== '..');
}

function signingKey(day: string, region: string, service: string, secret: string): Buffer {
  const last = lastKeys.get(service);
  if (last?.day === day && last.region === region && last.secret === secret) return last.key;
  let key = createHmac('sha256', `AWS4${secret}`).update(day).digest();
  for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  lastKeys.set(service, { day, region, secret, key });
  return key;
}
