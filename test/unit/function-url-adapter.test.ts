import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { toFunctionUrlResult, toWebRequest } from '../../lambdas/aws/function-url-adapter.ts';

function event(overrides: Partial<LambdaFunctionURLEvent> = {}, method = 'POST'): LambdaFunctionURLEvent {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', host: 'abc123.lambda-url.us-east-1.on.aws' },
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.lambda-url.us-east-1.on.aws',
      domainPrefix: 'abc123',
      http: { method, path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '203.0.113.1', userAgent: 'test' },
      requestId: 'req-1',
      routeKey: '$default',
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: 1_767_225_600_000,
    },
    ...overrides,
  };
}

describe('toWebRequest', () => {
  it('builds the URL from the domain name, rawPath and rawQueryString, and takes the method from the request context', async () => {
    const request = toWebRequest(event({ rawPath: '/mcp/a%20b', rawQueryString: 'x=1&y=a%2Bb&x=2' }, 'DELETE'));
    expect(request.method).toBe('DELETE');
    const url = new URL(request.url);
    expect(url.origin).toBe('https://abc123.lambda-url.us-east-1.on.aws');
    expect(url.pathname).toBe('/mcp/a%20b');
    expect(url.searchParams.getAll('x')).toEqual(['1', '2']);
    expect(url.searchParams.get('y')).toBe('a+b');
  });

  it('falls back to the host header when the request context has no domain name', () => {
    const base = event({ headers: { host: 'localhost:3000', 'x-forwarded-proto': 'http' } });
    const request = toWebRequest({ ...base, requestContext: { ...base.requestContext, domainName: '' } });
    expect(request.url).toBe('http://localhost:3000/mcp');
  });

  it('passes a text body through', async () => {
    const request = toWebRequest(event({ body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' }));
    expect(await request.json()).toEqual({ jsonrpc: '2.0', id: 1, method: 'ping' });
  });

  it('decodes a base64 body to its exact bytes', async () => {
    const bytes = Uint8Array.from([0, 255, 128, 10, 13, 0xc3, 0x28]);
    const request = toWebRequest(event({ body: Buffer.from(bytes).toString('base64'), isBase64Encoded: true }));
    expect(new Uint8Array(await request.arrayBuffer())).toEqual(bytes);
  });

  it('decodes a base64 UTF-8 text body', async () => {
    const text = '{"name":"héllo 🌍"}';
    const request = toWebRequest(event({ body: Buffer.from(text).toString('base64'), isBase64Encoded: true }));
    expect(await request.text()).toBe(text);
  });

  it('has no body for GET even if the event carries one', async () => {
    const request = toWebRequest(event({ body: '' }, 'GET'));
    expect(request.body).toBeNull();
  });

  it('keeps comma-joined repeated headers as one header value', () => {
    const request = toWebRequest(event({ headers: { accept: 'application/json, text/event-stream', 'x-custom': 'a,b' } }));
    expect(request.headers.get('accept')).toBe('application/json, text/event-stream');
    expect(request.headers.get('x-custom')).toBe('a,b');
  });

  it('turns the cookies array into one cookie header', () => {
    const request = toWebRequest(event({ cookies: ['session=abc', 'theme=dark'] }));
    expect(request.headers.get('cookie')).toBe('session=abc; theme=dark');
  });

  it('has no cookie header when there are no cookies', () => {
    expect(toWebRequest(event()).headers.has('cookie')).toBe(false);
  });
});

describe('toFunctionUrlResult', () => {
  it('returns status, headers and a JSON body as text', async () => {
    const result = await toFunctionUrlResult(
      new Response('{"ok":true}', { status: 202, headers: { 'content-type': 'application/json', 'mcp-session-id': 's1' } }),
    );
    expect(result).toEqual({
      statusCode: 202,
      headers: { 'content-type': 'application/json', 'mcp-session-id': 's1' },
      body: '{"ok":true}',
      isBase64Encoded: false,
    });
  });

  it('keeps server-sent events as text', async () => {
    const body = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
    const result = await toFunctionUrlResult(new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
    expect(result).toMatchObject({ body, isBase64Encoded: false });
  });

  it('moves set-cookie headers to the cookies array, one entry each', async () => {
    const headers = new Headers({ 'content-type': 'text/plain' });
    headers.append('set-cookie', 'a=1; Path=/; HttpOnly');
    headers.append('set-cookie', 'b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT');
    const result = await toFunctionUrlResult(new Response('ok', { headers }));
    expect(result.cookies).toEqual(['a=1; Path=/; HttpOnly', 'b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT']);
    expect(result.headers).toEqual({ 'content-type': 'text/plain' });
  });

  it('has no cookies field when the response sets none', async () => {
    expect(await toFunctionUrlResult(new Response('ok'))).not.toHaveProperty('cookies');
  });

  it('joins repeated response headers with commas', async () => {
    const headers = new Headers();
    headers.append('vary', 'accept');
    headers.append('vary', 'origin');
    expect((await toFunctionUrlResult(new Response(null, { headers }))).headers).toEqual({ vary: 'accept, origin' });
  });

  it('base64-encodes a binary body', async () => {
    const bytes = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 255]);
    const result = await toFunctionUrlResult(new Response(bytes, { headers: { 'content-type': 'image/png' } }));
    expect(result.isBase64Encoded).toBe(true);
    expect(Buffer.from(result.body ?? '', 'base64')).toEqual(Buffer.from(bytes));
  });

  it('base64-encodes a compressed body even when its type is text', async () => {
    const bytes = Uint8Array.from([0x1f, 0x8b, 8, 0]);
    const result = await toFunctionUrlResult(
      new Response(bytes, { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
    );
    expect(result).toMatchObject({ isBase64Encoded: true, body: Buffer.from(bytes).toString('base64') });
  });

  it('base64-encodes an untyped body that is not UTF-8, and keeps an untyped UTF-8 body as text', async () => {
    const binary = await toFunctionUrlResult(new Response(Uint8Array.from([0xc3, 0x28])));
    expect(binary).toMatchObject({ isBase64Encoded: true, body: Buffer.from([0xc3, 0x28]).toString('base64') });
    const text = await toFunctionUrlResult(new Response(new TextEncoder().encode('héllo')));
    expect(text).toMatchObject({ isBase64Encoded: false, body: 'héllo' });
  });

  it('base64-encodes text in a charset other than UTF-8, so its bytes survive', async () => {
    const latin1 = Uint8Array.from([0x68, 0xe9]);
    const result = await toFunctionUrlResult(new Response(latin1, { headers: { 'content-type': 'text/plain; charset=iso-8859-1' } }));
    expect(result).toMatchObject({ isBase64Encoded: true, body: Buffer.from(latin1).toString('base64') });
  });

  it('returns an empty body for 204', async () => {
    expect(await toFunctionUrlResult(new Response(null, { status: 204 }))).toEqual({
      statusCode: 204,
      headers: {},
      body: '',
      isBase64Encoded: false,
    });
  });

  it('round-trips a request body through a fetch handler', async () => {
    const handler = async (request: Request) =>
      new Response(await request.arrayBuffer(), { headers: { 'content-type': 'application/octet-stream' } });
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const result = await toFunctionUrlResult(
      await handler(toWebRequest(event({ body: Buffer.from(bytes).toString('base64'), isBase64Encoded: true }))),
    );
    expect(result.isBase64Encoded).toBe(true);
    expect(new Uint8Array(Buffer.from(result.body ?? '', 'base64'))).toEqual(bytes);
  });
});
