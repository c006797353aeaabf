import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../client/sigv4-signer.ts';
import { IamAuthority } from '../../../local/iam/iam-authority.ts';
import { parseAuthorization, verifySigV4, type SignedRequest } from '../../../local/iam/sigv4-verifier.ts';

const URL_ = 'http://127.0.0.1:3000/mcp?x=1&x=2';
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

/** The request a Function URL server receives from the client library's `sigv4` option. */
async function signed(options: { secret?: string; body?: string } = {}): Promise<SignedRequest> {
  const headers = await signRequest(
    { url: URL_, method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY },
    { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: options.secret ?? 'local' } },
  );
  const url = new URL(URL_);
  return { method: 'POST', host: url.host, path: url.pathname, query: url.searchParams, headers, body: Buffer.from(options.body ?? BODY) };
}

describe('SigV4 verification (as a Function URL under AWS_IAM uses it)', () => {
  const iam = new IamAuthority([], { logger: { warn: () => undefined } });
  const verify = (request: SignedRequest) => verifySigV4(request, { service: 'lambda', region: 'us-east-1', lookup: (key) => iam.identify(key) });

  it("accepts the client library's signature made with the local key, and names the key", async () => {
    const result = await verify(await signed());
    expect(result).toMatchObject({ ok: true, authorization: { accessKeyId: 'local', service: 'lambda', region: 'us-east-1' } });
    expect(iam.identify('local')?.assumedRoleArn).toBe('arn:aws:sts::000000000000:assumed-role/async-mcp-local-caller/local');
  });

  it('refuses a changed body, a wrong secret, an unknown key, another service and a missing header', async () => {
    await expect(verify(await signed({ body: BODY.replace('tools/list', 'tools/call') }))).resolves.toMatchObject({ ok: false, problem: 'mismatch' });
    await expect(verify(await signed({ secret: 'other' }))).resolves.toMatchObject({ ok: false, problem: 'mismatch' });
    const request = await signed();
    const otherKey = {
      ...request,
      headers: { ...request.headers, authorization: request.headers.authorization!.replace('Credential=local/', 'Credential=nobody/') },
    };
    await expect(verify(otherKey)).resolves.toMatchObject({ ok: false, problem: 'unknown-key' });
    await expect(verifySigV4(request, { service: 'dynamodb', lookup: (key) => iam.identify(key) })).resolves.toMatchObject({
      ok: false,
      problem: 'wrong-scope',
    });
    await expect(verify({ ...request, headers: { ...request.headers, authorization: undefined } })).resolves.toEqual({ ok: false, problem: 'missing' });
    await expect(verify({ ...request, headers: { ...request.headers, authorization: 'Bearer x' } })).resolves.toEqual({ ok: false, problem: 'malformed' });
  });

  it('refuses a signed request whose body was swapped under the payload hash it names', async () => {
    const request = await signed();
    const named = { ...request, headers: { ...request.headers, 'x-amz-content-sha256': createHash('sha256').update(BODY).digest('hex') } };
    const resigned = await signRequest(
      {
        url: URL_,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-amz-content-sha256': named.headers['x-amz-content-sha256'] as string },
        body: BODY,
      },
      { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } },
    );
    const honest = { ...named, headers: resigned };
    await expect(verify(honest)).resolves.toMatchObject({ ok: true });
    const swapped = { ...honest, body: Buffer.from(BODY.replace('tools/list', 'tools/call')) };
    await expect(verify(swapped)).resolves.toMatchObject({ ok: false, problem: 'mismatch' });
    // S3's unsigned payloads name no hash to check.
    const unsigned = await signRequest(
      { url: URL_, method: 'POST', headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, body: BODY },
      { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } },
    );
    await expect(verify({ ...honest, headers: unsigned, body: Buffer.from('anything') })).resolves.toMatchObject({ ok: true });
  });

  it('parses the Authorization header', () => {
    expect(parseAuthorization('AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc')).toEqual({
      accessKeyId: 'AKID',
      date: '20261201',
      region: 'us-east-1',
      service: 's3',
      signedHeaders: ['host', 'x-amz-date'],
      signature: 'abc',
    });
  });
});
