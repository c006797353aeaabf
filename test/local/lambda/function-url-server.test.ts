/**
 * A Function URL in front of a local function behaves as AWS's: RESPONSE_STREAM streams and
 * BUFFERED holds everything to the end, a failed invocation is a 502, an oversized request a
 * 413, CORS preflights are the URL's own answer, and AWS_IAM takes only valid SigV4 signatures
 * from callers allowed to invoke.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signRequest, sigV4Fetch } from '../../../client/index.ts';
import type { FunctionUrlEvent } from '../../../local/lambda/function-url-event.ts';
import { serveFunctionUrl, type FunctionUrlAuthority, type FunctionUrlServerOptions } from '../../../local/lambda/function-url-server.ts';
import { startLocalFunction, type LocalFunction } from '../../../local/lambda/local-function.ts';
import { assetRoot, writeAsset } from './lambda-assets.ts';

const CALLER_ARN = 'arn:aws:sts::000000000000:assumed-role/async-mcp-local-caller/local';

let root: string;
let removeRoot: () => Promise<void>;
let echo: LocalFunction;
let sse: LocalFunction;
const closers: Array<() => Promise<void>> = [];

const ECHO = [
  'let invocations = 0;',
  'export const handler = async (event) => {',
  '  invocations++;',
  "  if (event.rawPath === '/throw') throw new Error('boom');",
  "  if (event.rawPath === '/slow') await new Promise((r) => setTimeout(r, 3000));",
  "  if (event.rawPath === '/plain') return { hello: 'world' };",
  "  return { statusCode: 201, headers: { 'content-type': 'application/json', 'access-control-allow-origin': '*' }, cookies: ['a=1; Path=/', 'b=2'], body: JSON.stringify({ event, invocations }) };",
  '};',
].join('\n');

const SSE = [
  'export const handler = awslambda.streamifyResponse(async (event, responseStream) => {',
  "  const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: 200, headers: { 'content-type': 'text/event-stream' } });",
  "  stream.write('data: first\\n\\n');",
  '  await new Promise((r) => setTimeout(r, 600));',
  "  stream.write('data: second\\n\\n');",
  '  stream.end();',
  '});',
].join('\n');

beforeAll(async () => {
  ({ root, remove: removeRoot } = await assetRoot());
  echo = await startLocalFunction({
    fn: await writeAsset(root, 'Echo', { 'index.mjs': ECHO }, { timeoutSeconds: 1 }),
    runtimeEnvironment: {},
    onLog: () => undefined,
  });
  sse = await startLocalFunction({ fn: await writeAsset(root, 'Sse', { 'index.mjs': SSE }), runtimeEnvironment: {}, onLog: () => undefined });
  // Cold starts out of the way: the timing tests measure the URL, not the init.
  await Promise.all([echo.invoke({ rawPath: '/' }), sse.invokeStreaming({}).then(({ body }) => new Response(body).text())]);
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(async () => {
  await Promise.all([echo?.close(), sse?.close()]);
  await removeRoot();
});

async function serve(fn: LocalFunction, url: Partial<FunctionUrlServerOptions['url']> = {}, iam?: FunctionUrlAuthority): Promise<URL> {
  const served = await serveFunctionUrl({
    url: { logicalId: 'Url', targetFunctionLogicalId: 'Fn', authType: 'NONE', invokeMode: 'RESPONSE_STREAM', ...url },
    fn,
    functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-Echo-ABCDEF123456',
    host: '127.0.0.1',
    port: 0,
    path: '/mcp',
    ...(iam ? { iam } : {}),
  });
  closers.push(served.close);
  return served.url;
}

/** Reads a response body, noting when each chunk arrived (ms after `since`). */
async function arrivals(response: Response, since: number): Promise<Array<{ at: number; text: string }>> {
  const reader = response.body!.getReader();
  const chunks: Array<{ at: number; text: string }> = [];
  for (let next = await reader.read(); !next.done; next = await reader.read())
    chunks.push({ at: Date.now() - since, text: new TextDecoder().decode(next.value) });
  return chunks;
}

describe('a Function URL', () => {
  it('in RESPONSE_STREAM mode sends the first server-sent event while the function still runs', async () => {
    const url = await serve(sse, { invokeMode: 'RESPONSE_STREAM' });
    const began = Date.now();
    const response = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const chunks = await arrivals(response, began);
    expect(chunks.map((chunk) => chunk.text).join('')).toBe('data: first\n\ndata: second\n\n');
    expect(chunks[0]!.at).toBeLessThan(450);
    expect(chunks.at(-1)!.at).toBeGreaterThanOrEqual(590);
  });

  it('outlives a client that hangs up mid-stream: the function runs to its end and the next request is served', async () => {
    const url = await serve(sse, { invokeMode: 'RESPONSE_STREAM' });
    const abort = new AbortController();
    const response = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, signal: abort.signal });
    await response.body!.getReader().read();
    abort.abort();
    // The rest of the function's output arrives with nobody to read it.
    await new Promise((resolve) => setTimeout(resolve, 800));
    const next = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(await next.text()).toBe('data: first\n\ndata: second\n\n');
  });

  it('in BUFFERED mode sends the whole response only once the function has ended: SSE arrives at the end', async () => {
    const url = await serve(sse, { invokeMode: 'BUFFERED' });
    const began = Date.now();
    const response = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    const headersAt = Date.now() - began;
    const chunks = await arrivals(response, began);
    expect(chunks.map((chunk) => chunk.text).join('')).toBe('data: first\n\ndata: second\n\n');
    expect(headersAt).toBeGreaterThanOrEqual(590);
    expect(chunks[0]!.at).toBeGreaterThanOrEqual(590);
    expect(response.headers.get('content-length')).toBe(String('data: first\n\ndata: second\n\n'.length));
  });

  it('turns a returned response object into status, headers, cookies and body; any other value into a 200 JSON body', async () => {
    for (const invokeMode of ['BUFFERED', 'RESPONSE_STREAM'] as const) {
      const url = await serve(echo, { invokeMode });
      const response = await fetch(new URL('/any/path?x=1&x=2', url), { method: 'POST', body: 'hi', headers: { 'content-type': 'text/plain', cookie: 'c=3' } });
      expect(response.status).toBe(201);
      expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2']);
      const { event } = (await response.json()) as { event: FunctionUrlEvent };
      expect(event).toMatchObject({
        rawPath: '/any/path',
        rawQueryString: 'x=1&x=2',
        cookies: ['c=3'],
        body: 'hi',
        isBase64Encoded: false,
        queryStringParameters: { x: '1,2' },
      });
      expect(event.requestContext).toMatchObject({
        accountId: 'anonymous',
        http: { method: 'POST', path: '/any/path', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1' },
      });
      expect(event.headers['x-forwarded-proto']).toBe('http');
      expect(event.headers['x-amzn-trace-id']).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24}$/);
      expect(response.headers.get('x-amzn-requestid')).toBe(event.requestContext.requestId);
      const plain = await fetch(new URL('/plain', url));
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toBe('application/json');
      expect(await plain.text()).toBe('{"hello":"world"}');
    }
  });

  it("answers 502 with AWS's body when the function throws or times out", async () => {
    const url = await serve(echo, { invokeMode: 'BUFFERED' });
    for (const path of ['/throw', '/slow']) {
      const response = await fetch(new URL(path, url));
      expect(response.status).toBe(502);
      expect(await response.text()).toBe('{"Message":"Internal Server Error"}');
    }
  });

  it('breaks a streamed response when the function fails after its prelude, and answers 502 for the same failure when BUFFERED', async () => {
    const breaking = await startLocalFunction({
      fn: await writeAsset(root, 'Breaks', {
        'index.mjs': [
          'export const handler = awslambda.streamifyResponse(async (event, responseStream) => {',
          "  const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: 200, headers: { 'content-type': 'text/event-stream' } });",
          "  stream.write('data: first\\n\\n');",
          '  await new Promise((r) => setTimeout(r, 50));',
          "  throw new Error('mid-stream');",
          '});',
        ].join('\n'),
      }),
      runtimeEnvironment: {},
      onLog: () => undefined,
    });
    closers.push(() => breaking.close());
    const streamed = await fetch(await serve(breaking, { invokeMode: 'RESPONSE_STREAM' }));
    expect(streamed.status).toBe(200);
    await expect(streamed.text()).rejects.toThrow();
    const buffered = await fetch(await serve(breaking, { invokeMode: 'BUFFERED' }));
    expect(buffered.status).toBe(502);
    expect(await buffered.text()).toBe('{"Message":"Internal Server Error"}');
  });

  it('answers 413 to a request body over the 6 MB invocation payload limit, without invoking the function', async () => {
    const url = await serve(echo);
    const response = await fetch(url, { method: 'POST', body: 'x'.repeat(6_300_000), headers: { 'content-type': 'text/plain' } });
    expect(response.status).toBe(413);
    expect(await response.text()).toContain('6291456 bytes');
  });

  it("answers a CORS preflight itself, from the template's Cors, and puts its CORS headers on the function's responses", async () => {
    const cors = {
      AllowOrigins: ['https://app.example'],
      AllowMethods: ['GET', 'POST'],
      AllowHeaders: ['content-type', 'mcp-session-id'],
      ExposeHeaders: ['mcp-session-id'],
      MaxAge: 300,
      AllowCredentials: true,
    };
    const url = await serve(echo, { cors });
    const preflight = await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(200);
    expect(await preflight.text()).toBe('');
    expect(Object.fromEntries([...preflight.headers].filter(([name]) => name.startsWith('access-control-')))).toEqual({
      'access-control-allow-origin': 'https://app.example',
      'access-control-allow-methods': 'GET,POST',
      'access-control-allow-headers': 'content-type,mcp-session-id',
      'access-control-max-age': '300',
      'access-control-allow-credentials': 'true',
    });
    const refused = await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const actual = await fetch(url, { method: 'POST', body: '{}', headers: { origin: 'https://app.example', 'content-type': 'application/json' } });
    expect(actual.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(actual.headers.get('access-control-expose-headers')).toBe('mcp-session-id');
  });

  it('passes an OPTIONS request to the function when the template configures no CORS', async () => {
    const url = await serve(echo);
    const response = await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    expect(response.status).toBe(201);
    const { event } = (await response.json()) as { event: FunctionUrlEvent };
    expect(event.requestContext.http.method).toBe('OPTIONS');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('an AWS_IAM Function URL', () => {
  const decisions: Array<Parameters<FunctionUrlAuthority['authorize']>[0]> = [];
  let allow = true;
  /** Stands in for the IAM authority: the local caller's key, and a decision we choose. */
  const authority: FunctionUrlAuthority = {
    localCaller: { accessKeyId: 'local', secretAccessKey: 'local', assumedRoleArn: CALLER_ARN, userId: 'AROALOCALCALLER:local', accountId: '000000000000' },
    identify: (accessKeyId) =>
      accessKeyId === 'ASIAWORKER'
        ? {
            roleArn: 'arn:aws:iam::000000000000:role/Worker',
            assumedRoleArn: 'arn:aws:sts::000000000000:assumed-role/Worker/worker-fn',
            sessionName: 'worker-fn',
            secretAccessKey: 'worker-secret',
            sessionToken: 'worker-token',
          }
        : undefined,
    authorize(request) {
      decisions.push(request);
      return allow ? { allowed: true } : { allowed: false, message: `User: ${request.principalArn} is not authorized to perform: ${request.action}` };
    },
  };
  const local = { accessKeyId: 'local', secretAccessKey: 'local' };
  const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' };

  it('refuses an unsigned request, or one signed with the wrong secret, with 403 Forbidden', async () => {
    const url = await serve(echo, { authType: 'AWS_IAM' }, authority);
    const unsigned = await fetch(url, post);
    expect(unsigned.status).toBe(403);
    expect(await unsigned.text()).toBe('{"Message":"Forbidden"}');
    const wrong = await sigV4Fetch({ region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'not-local' } })(url.href, post);
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toBe('{"Message":"Forbidden"}');
  });

  it('refuses a signed request whose body was changed after signing, or signed for another service', async () => {
    const url = await serve(echo, { authType: 'AWS_IAM' }, authority);
    const headers = await signRequest({ method: 'POST', url: url.href, headers: post.headers, body: post.body }, { region: 'us-east-1', credentials: local });
    const { host: _host, ...sent } = headers;
    expect((await fetch(url, { method: 'POST', headers: sent, body: '{"jsonrpc":"2.0","id":2,"method":"ping"}' })).status).toBe(403);
    const other = await sigV4Fetch({ region: 'us-east-1', service: 'execute-api', credentials: local })(url.href, post);
    expect(other.status).toBe(403);
  });

  it('serves a request signed with the local key, and the function sees the assumed-role caller in authorizer.iam', async () => {
    decisions.length = 0;
    const url = await serve(echo, { authType: 'AWS_IAM' }, authority);
    const response = await sigV4Fetch({ region: 'us-east-1', credentials: local })(`${url.href}?q=a%20b`, post);
    expect(response.status).toBe(201);
    const { event } = (await response.json()) as { event: FunctionUrlEvent };
    expect(event.requestContext.accountId).toBe('000000000000');
    expect(event.requestContext.authorizer?.iam).toEqual({
      accessKey: 'local',
      accountId: '000000000000',
      callerId: 'AROALOCALCALLER:local',
      cognitoIdentity: null,
      principalOrgId: null,
      userArn: CALLER_ARN,
      userId: 'AROALOCALCALLER:local',
    });
    expect(decisions).toEqual([
      {
        principalArn: CALLER_ARN,
        action: 'lambda:InvokeFunctionUrl',
        resource: 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-Echo-ABCDEF123456',
        context: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' },
      },
    ]);
  });

  it('serves a caller signing with role session credentials the authority issued, and refuses them with another session token', async () => {
    const url = await serve(echo, { authType: 'AWS_IAM' }, authority);
    const worker = { accessKeyId: 'ASIAWORKER', secretAccessKey: 'worker-secret', sessionToken: 'worker-token' };
    const response = await sigV4Fetch({ region: 'us-east-1', credentials: worker })(url.href, post);
    expect(response.status).toBe(201);
    const { event } = (await response.json()) as { event: FunctionUrlEvent };
    expect(event.requestContext.authorizer?.iam).toMatchObject({ accessKey: 'ASIAWORKER', userArn: 'arn:aws:sts::000000000000:assumed-role/Worker/worker-fn' });
    const forged = await sigV4Fetch({ region: 'us-east-1', credentials: { ...worker, sessionToken: 'other' } })(url.href, post);
    expect(forged.status).toBe(403);
  });

  it('refuses a validly signed caller that is not allowed lambda:InvokeFunctionUrl, with 403 Forbidden', async () => {
    allow = false;
    try {
      const url = await serve(echo, { authType: 'AWS_IAM' }, authority);
      const response = await sigV4Fetch({ region: 'us-east-1', credentials: local })(url.href, post);
      expect(response.status).toBe(403);
      expect(await response.text()).toBe('{"Message":"Forbidden"}');
    } finally {
      allow = true;
    }
  });
});
