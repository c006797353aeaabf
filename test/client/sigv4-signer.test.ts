/**
 * The SigV4 signer against AWS's published Signature Version 4 test suite vectors
 * (get-vanilla, post-vanilla: credentials AKIDEXAMPLE, 2015-08-30T12:36:00Z, us-east-1,
 * service "service"), and the Function URL defaults (service lambda, Region from the host).
 */
import { describe, expect, it } from 'vitest';
import { regionOfFunctionUrl, signRequest, sigV4Fetch } from '../../client/index.ts';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const vector = { region: 'us-east-1', service: 'service', credentials, now: () => new Date('2015-08-30T12:36:00Z') };
const SCOPE = 'Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date';

describe('SigV4 signer', () => {
  it('signs get-vanilla exactly as the AWS test suite does', async () => {
    const headers = await signRequest({ method: 'GET', url: 'https://example.amazonaws.com/', headers: {} }, vector);
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
    expect(headers.authorization).toBe(`AWS4-HMAC-SHA256 ${SCOPE}, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31`);
  });

  it('signs post-vanilla exactly as the AWS test suite does', async () => {
    const headers = await signRequest({ method: 'POST', url: 'https://example.amazonaws.com/', headers: {} }, vector);
    expect(headers.authorization).toBe(`AWS4-HMAC-SHA256 ${SCOPE}, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b`);
  });

  it('a Function URL is signed for service lambda in the Region of its host, with the session token and body hash covered', async () => {
    expect(regionOfFunctionUrl('https://abc123.lambda-url.eu-west-2.on.aws/mcp')).toBe('eu-west-2');
    const sent: Array<{ url: string; headers: Headers }> = [];
    const signedFetch = sigV4Fetch({ credentials: { ...credentials, sessionToken: 'session' }, now: vector.now }, async (url, init) => {
      sent.push({ url, headers: new Headers(init.headers) });
      return new Response('{}');
    });
    await signedFetch('https://abc123.lambda-url.eu-west-2.on.aws/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    const authorization = sent[0]!.headers.get('authorization')!;
    expect(authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20150830\/eu-west-2\/lambda\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
    expect(sent[0]!.headers.get('x-amz-security-token')).toBe('session');
    // The body is part of the signature: another body, another signature.
    await signedFetch('https://abc123.lambda-url.eu-west-2.on.aws/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":2}' });
    expect(sent[1]!.headers.get('authorization')).not.toBe(authorization);
  });
});
