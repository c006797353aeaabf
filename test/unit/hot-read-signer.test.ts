/**
 * The hot read's signer computes the signature the SDK's own signer computes, header for
 * header: for dates across days and years (its signing key is kept per day), bodies of every
 * kind, with and without a session token, on a port or not, on a path with a prefix, in
 * several regions. What it does not take (a path the canonical form would rewrite, a query,
 * an unsignable header) it refuses, and the hot read falls back to the SDK.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { HotRequest } from '../../lambdas/aws/hot-get-item.ts';
import { signHotRequest, type SigningCredentials } from '../../lambdas/aws/hot-read-signer.ts';

const LONG_TERM: SigningCredentials = { accessKeyId: 'AKIDSIGNERPARITY', secretAccessKey: 'signer-parity-secret' };
const TEMPORARY: SigningCredentials = { accessKeyId: 'ASIASIGNERPARITY', secretAccessKey: 'signer-parity-secret-2', sessionToken: 'token/with+chars==' };

/** The signer a DynamoDB client's config builds: the one its `send` signs with. */
async function sdkSigner(credentials: SigningCredentials, region: string) {
  const client = new DynamoDBClient({ region, credentials, endpoint: 'http://127.0.0.1:8000' });
  const signer = (await (client.config as unknown as { signer: () => Promise<unknown> }).signer()) as {
    sign(request: HotRequest, options: { signingDate: Date }): Promise<HotRequest>;
  };
  return { sign: (request: HotRequest, signingDate: Date) => signer.sign(request, { signingDate }), close: () => client.destroy() };
}

function getItem(body: string, host = 'dynamodb.us-east-1.amazonaws.com', path = '/'): HotRequest {
  const [hostname, port] = host.split(':') as [string, string | undefined];
  return {
    method: 'POST',
    protocol: port ? 'http:' : 'https:',
    hostname,
    ...(port ? { port: Number(port) } : {}),
    path,
    query: {},
    headers: {
      host,
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.GetItem',
      'content-length': String(Buffer.byteLength(body)),
    },
    body,
  };
}

const BODIES = [
  JSON.stringify({ TableName: 'operations', Key: { pk: { S: 'OP#owner-1#token-1' } }, ConsistentRead: true }),
  '',
  JSON.stringify({ TableName: 'operations', Key: { pk: { S: 'OP#pérson 東京 \u{1F600}#t' } }, ConsistentRead: true }),
  '{"spaces":   "  and\ttabs  "}',
];

const DATES = ['2026-12-03T12:00:00.000Z', '2026-12-03T23:59:59.999Z', '2026-12-04T00:00:00.000Z', '2027-01-01T00:00:00.500Z', '2026-12-03T12:00:01.000Z'];

describe('the hot read signer', () => {
  it.each([
    ['long-term credentials', LONG_TERM, 'us-east-1', 'dynamodb.us-east-1.amazonaws.com', '/'],
    ['temporary credentials', TEMPORARY, 'us-east-1', 'dynamodb.us-east-1.amazonaws.com', '/'],
    ['a local endpoint on a port', TEMPORARY, 'us-east-1', '127.0.0.1:8000', '/'],
    ['another region', LONG_TERM, 'eu-west-1', 'dynamodb.eu-west-1.amazonaws.com', '/'],
    ['an endpoint with a path prefix', TEMPORARY, 'ap-southeast-2', 'localhost:4566', '/dynamo/'],
    ['an endpoint with a path', LONG_TERM, 'us-west-2', 'localhost:4566', '/proxy/dynamodb'],
  ])('signs as the SDK does, with %s', async (_, credentials, region, host, path) => {
    const sdk = await sdkSigner(credentials, region);
    try {
      for (const date of DATES) {
        for (const body of BODIES) {
          const request = getItem(body, host, path);
          const signingDate = new Date(date);
          const expected = await sdk.sign(request, signingDate);
          const actual = signHotRequest(request, credentials, region, signingDate);
          expect(actual.headers, `${date} ${JSON.stringify(body)}`).toEqual({ ...expected.headers });
          expect({ ...actual, headers: {} }).toEqual({ ...request, headers: {} });
        }
      }
    } finally {
      sdk.close();
    }
  });

  it('leaves the request it signs as it was', () => {
    const request = getItem(BODIES[0] as string);
    const before = structuredClone(request);
    signHotRequest(request, TEMPORARY, 'us-east-1', new Date(DATES[0] as string));
    expect(request).toEqual(before);
  });

  it('signs with the secret it is given, not one it kept for the day', async () => {
    const signingDate = new Date(DATES[0] as string);
    const request = getItem(BODIES[0] as string);
    const rotated = { ...TEMPORARY, secretAccessKey: 'rotated-secret' };
    signHotRequest(request, TEMPORARY, 'us-east-1', signingDate);
    const sdk = await sdkSigner(rotated, 'us-east-1');
    try {
      expect(signHotRequest(request, rotated, 'us-east-1', signingDate).headers).toEqual({ ...(await sdk.sign(request, signingDate)).headers });
    } finally {
      sdk.close();
    }
  });

  it.each([
    ['a path the canonical form would rewrite', { path: '/a//b' }],
    ['a dot segment', { path: '/a/../b' }],
    ['a path needing escapes', { path: '/a b' }],
    ['a query', { query: { x: '1' } }],
  ])('refuses %s', (_, change) => {
    const request = { ...getItem(BODIES[0] as string), ...change };
    expect(() => signHotRequest(request, LONG_TERM, 'us-east-1', new Date(DATES[0] as string))).toThrow(/hot read signs/);
  });

  it.each([['user-agent'], ['X-Amz-Target']])('refuses a header named %s', (name) => {
    const request = getItem(BODIES[0] as string);
    const withHeader = { ...request, headers: { ...request.headers, [name]: 'x' } };
    expect(() => signHotRequest(withHeader, LONG_TERM, 'us-east-1', new Date(DATES[0] as string))).toThrow(`does not sign a header named ${name}`);
  });
});
