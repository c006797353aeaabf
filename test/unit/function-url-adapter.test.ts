import { Writable } from 'node:stream';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  streamingFunctionUrlHandler,
  toWebRequest,
  type HttpPrelude,
  type LambdaStreamingRuntime,
  type ResponseStream,
} from '../../lambdas/aws/function-url-adapter.ts';

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

/** The content type the runtime's HttpResponseStream.from sets: a JSON prelude, 8 NUL bytes, then the body. */
const PRELUDE_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';

/** A stand-in for the runtime's response stream: a Writable that records what reaches it, and when it ended. */
function fakeResponseStream(options: { highWaterMark?: number; slow?: boolean } = {}) {
  const chunks: Buffer[] = [];
  let pending: (() => void) | undefined;
  const stream = new Writable({
    highWaterMark: options.highWaterMark ?? 16_384,
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      // A slow consumer holds each write until released, so the stream fills up.
      if (options.slow) pending = callback;
      else callback();
    },
  });
  return Object.assign(stream, {
    chunks,
    contentType: undefined as string | undefined,
    setContentType(type: string) {
      this.contentType = type;
    },
    releaseWrite() {
      const release = pending;
      pending = undefined;
      release?.();
    },
    /** Everything written so far, split as the runtime's protocol frames it. */
    received(): { prelude: HttpPrelude; body: Buffer } {
      const bytes = Buffer.concat(chunks);
      const split = bytes.indexOf(Buffer.alloc(8));
      if (split < 0) throw new Error(`no prelude delimiter in ${bytes.toString()}`);
      return { prelude: JSON.parse(bytes.subarray(0, split).toString()) as HttpPrelude, body: bytes.subarray(split + 8) };
    },
  });
}
type FakeStream = ReturnType<typeof fakeResponseStream>;

/** The runtime's `awslambda` global as the Node.js runtime implements it: the prelude goes out just before the first write. */
function fakeAwsLambda(): LambdaStreamingRuntime {
  return {
    streamifyResponse: vi.fn((handler) => handler),
    HttpResponseStream: {
      from(responseStream, prelude) {
        const stream = responseStream as unknown as FakeStream;
        stream.setContentType(PRELUDE_CONTENT_TYPE);
        const write = stream.write.bind(stream);
        let first = true;
        stream.write = ((chunk: Uint8Array) => {
          if (first) {
            first = false;
            write(JSON.stringify(prelude));
            write(new Uint8Array(8));
          }
          return write(chunk);
        }) as typeof stream.write;
        return stream as unknown as ResponseStream;
      },
    },
  };
}

/** A body that yields `first`, then waits for `release()` before `rest` and its end. */
function heldBody(first: string | Uint8Array, ...rest: (string | Uint8Array)[]) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const encode = (part: string | Uint8Array) => (typeof part === 'string' ? new TextEncoder().encode(part) : part);
  const cancel = vi.fn();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encode(first));
      await released;
      for (const part of rest) controller.enqueue(encode(part));
      controller.close();
    },
    cancel,
  });
  return { body, release, cancel };
}

describe('streamingFunctionUrlHandler (RESPONSE_STREAM)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('is wrapped by the awslambda global of the Lambda runtime', () => {
    const runtime = fakeAwsLambda();
    vi.stubGlobal('awslambda', runtime);
    const handler = streamingFunctionUrlHandler(async () => new Response('ok'));
    expect(runtime.streamifyResponse).toHaveBeenCalledWith(handler);
  });

  it('refuses to start outside the Lambda runtime, saying it needs a RESPONSE_STREAM Function URL', () => {
    vi.stubGlobal('awslambda', undefined);
    expect(() => streamingFunctionUrlHandler(async () => new Response('ok'))).toThrow(/awslambda\.streamifyResponse .*RESPONSE_STREAM/);
  });

  it('writes the first SSE event to the response stream before the body ends', async () => {
    vi.stubGlobal('awslambda', fakeAwsLambda());
    const first = 'event: message\ndata: {"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{}}\n\n';
    const last = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
    const { body, release } = heldBody(first, last);
    const handler = streamingFunctionUrlHandler(async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
    const stream = fakeResponseStream();
    let settled = false;
    const done = handler(event(), stream as unknown as ResponseStream).finally(() => (settled = true));

    await vi.waitFor(() => expect(stream.received().body.toString()).toBe(first));
    expect(stream.writableEnded).toBe(false);
    expect(settled).toBe(false);
    expect(stream.contentType).toBe(PRELUDE_CONTENT_TYPE);
    expect(stream.received().prelude).toEqual({ statusCode: 200, headers: { 'content-type': 'text/event-stream' } });

    release();
    await done;
    expect(stream.received().body.toString()).toBe(first + last);
    expect(stream.writableFinished).toBe(true);
  });

  it('sends status and headers in the prelude, set-cookie headers as cookies and repeated headers comma-joined', async () => {
    const headers = new Headers({ 'content-type': 'application/json', 'mcp-session-id': 's1' });
    headers.append('vary', 'accept');
    headers.append('vary', 'origin');
    headers.append('set-cookie', 'a=1; Path=/; HttpOnly');
    headers.append('set-cookie', 'b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT');
    const handler = streamingFunctionUrlHandler(async () => new Response('{"ok":true}', { status: 202, headers }), fakeAwsLambda());
    const stream = fakeResponseStream();
    await handler(event(), stream as unknown as ResponseStream);
    expect(stream.received()).toEqual({
      prelude: {
        statusCode: 202,
        headers: { 'content-type': 'application/json', 'mcp-session-id': 's1', vary: 'accept, origin' },
        cookies: ['a=1; Path=/; HttpOnly', 'b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT'],
      },
      body: Buffer.from('{"ok":true}'),
    });
  });

  it('sends the prelude for a response without a body (the runtime writes it only with a first write), then ends', async () => {
    const handler = streamingFunctionUrlHandler(async () => new Response(null, { status: 202 }), fakeAwsLambda());
    const stream = fakeResponseStream();
    await handler(event(), stream as unknown as ResponseStream);
    expect(stream.received()).toEqual({ prelude: { statusCode: 202, headers: {} }, body: Buffer.alloc(0) });
    expect(stream.writableFinished).toBe(true);
  });

  it('passes a binary body through byte for byte', async () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const handler = streamingFunctionUrlHandler(async () => new Response(bytes, { headers: { 'content-type': 'image/png' } }), fakeAwsLambda());
    const stream = fakeResponseStream();
    await handler(event(), stream as unknown as ResponseStream);
    expect(new Uint8Array(stream.received().body)).toEqual(bytes);
  });

  it('hands the fetch handler the Request the event describes, and the event itself', async () => {
    const fetch = vi.fn(async (request: Request, _event: LambdaFunctionURLEvent) => new Response(await request.text()));
    const handler = streamingFunctionUrlHandler(fetch, fakeAwsLambda());
    const stream = fakeResponseStream();
    const incoming = event({ body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    await handler(incoming, stream as unknown as ResponseStream);
    expect(fetch.mock.calls[0]![0].url).toBe('https://abc123.lambda-url.us-east-1.on.aws/mcp');
    expect(fetch.mock.calls[0]![1]).toBe(incoming);
    expect(stream.received().body.toString()).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}');
  });

  it('waits for the stream to drain before writing more when it is full', async () => {
    const handler = streamingFunctionUrlHandler(
      async () =>
        new Response(
          new ReadableStream({
            start: (c) => {
              c.enqueue(new Uint8Array(64));
              c.enqueue(Uint8Array.of(1));
              c.close();
            },
          }),
        ),
      fakeAwsLambda(),
    );
    const stream = fakeResponseStream({ highWaterMark: 16, slow: true });
    const done = handler(event(), stream as unknown as ResponseStream);
    // The prelude is being written and the stream is full: nothing more goes in until it drains.
    await vi.waitFor(() => expect(stream.chunks.length).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Only the prelude and the delimiter are queued: the 64-byte chunk waits for 'drain'.
    expect(stream.writableLength).toBe(JSON.stringify({ statusCode: 200, headers: {} }).length + 8);
    const release = setInterval(() => stream.releaseWrite(), 1);
    try {
      await done;
    } finally {
      clearInterval(release);
    }
    expect([...stream.received().body]).toEqual([...new Uint8Array(64), 1]);
  });

  it('fails the invocation when the body fails midway, instead of ending a truncated response as if whole', async () => {
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: one\n\n'));
        queueMicrotask(() => controller.error(new Error('store unreachable')));
      },
    });
    const handler = streamingFunctionUrlHandler(async () => new Response(failing, { headers: { 'content-type': 'text/event-stream' } }), fakeAwsLambda());
    const stream = fakeResponseStream();
    await expect(handler(event(), stream as unknown as ResponseStream)).rejects.toThrow('store unreachable');
    expect(stream.writableEnded).toBe(false);
  });

  it('stops reading the body when the response stream fails', async () => {
    const { body, cancel } = heldBody('data: one\n\n', 'data: two\n\n');
    const handler = streamingFunctionUrlHandler(async () => new Response(body), fakeAwsLambda());
    const stream = fakeResponseStream();
    const done = handler(event(), stream as unknown as ResponseStream);
    await vi.waitFor(() => expect(stream.received().body.toString()).toBe('data: one\n\n'));
    stream.destroy(new Error('connection reset'));
    await expect(done).rejects.toThrow('connection reset');
    expect(cancel).toHaveBeenCalled();
  });
});
