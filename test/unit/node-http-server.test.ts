/** The local HTTP server: what the Function URL gives the handler, on node:http. */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_BODY_BYTES } from '../../lambdas/mcp/edge/http-handler.ts';
import { serveFetch, type FetchHandler, type InvokeMode, type NodeHttpServer } from '../../local/node-http-server.ts';

let server: NodeHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: FetchHandler, invokeMode?: InvokeMode) {
  server = await serveFetch(handler, { host: '127.0.0.1', port: 0, path: '/mcp', ...(invokeMode ? { invokeMode } : {}) });
  return server.url;
}

/** How long a buffered first event is waited for before the test lets the response end. */
const EARLY_WINDOW_MS = 300;

describe('serveFetch', () => {
  it('listens on the host it is given and passes method, URL, headers and body through', async () => {
    const url = await serve(async (request) =>
      Response.json({ method: request.method, url: request.url, echo: await request.text(), h: request.headers.get('x-test') }),
    );
    expect(url.hostname).toBe('127.0.0.1');
    const response = await fetch(url, { method: 'POST', headers: { 'x-test': 'yes' }, body: 'hello' });
    expect(await response.json()).toEqual({ method: 'POST', url: url.href, echo: 'hello', h: 'yes' });
  });

  it('answers a body declared over 1 MB with HTTP 413 and a JSON-RPC error, without calling the handler', async () => {
    const handler = vi.fn(async () => new Response('unexpected'));
    const url = await serve(handler);
    const status = await new Promise<{ code: number; text: string }>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': MAX_BODY_BYTES + 1 } }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      // Only a first piece of the declared body is ever sent.
      req.write('x'.repeat(1024));
    });
    expect(status.code).toBe(413);
    expect(JSON.parse(status.text)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: `Request body exceeds ${MAX_BODY_BYTES} bytes` },
    });
    expect(handler).not.toHaveBeenCalled();
  });

  it.each([
    { mode: 'unset (as npm start serves)', invokeMode: undefined, early: true },
    { mode: 'RESPONSE_STREAM', invokeMode: 'RESPONSE_STREAM', early: true },
    { mode: 'BUFFERED', invokeMode: 'BUFFERED', early: false },
  ] as const)('invoke mode $mode: the first SSE event of a response reaches the client before the response ends: $early', async ({ invokeMode, early }) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const url = await serve(async () => {
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode('data: first\n\n'));
          await released;
          controller.enqueue(encoder.encode('data: second\n\n'));
          controller.close();
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    }, invokeMode);

    let text = '';
    let sawFirst!: () => void;
    const firstArrived = new Promise<boolean>((resolve) => (sawFirst = () => resolve(true)));
    const reading = (async () => {
      const response = await fetch(url);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      for await (const chunk of response.body!) {
        text += new TextDecoder().decode(chunk);
        if (text.includes('data: first')) sawFirst();
      }
    })();
    const arrivedEarly = await Promise.race([firstArrived, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), EARLY_WINDOW_MS))]);
    release();
    await reading;
    expect(arrivedEarly).toBe(early);
    expect(text).toBe('data: first\n\ndata: second\n\n');
  });

  it('in BUFFERED mode keeps the status and headers, and answers a response without a body', async () => {
    const url = await serve(async () => new Response(null, { status: 202, headers: { 'x-test': 'yes' } }), 'BUFFERED');
    const response = await fetch(url, { method: 'POST', body: '{}' });
    expect(response.status).toBe(202);
    expect(response.headers.get('x-test')).toBe('yes');
    expect(await response.text()).toBe('');
  });

  it('aborts the request signal when the client disconnects', async () => {
    let aborted!: () => void;
    const sawAbort = new Promise<void>((resolve) => (aborted = resolve));
    const url = await serve(async (request) => {
      request.signal.addEventListener('abort', () => aborted());
      return new Response(new ReadableStream({ start: () => undefined }), { headers: { 'content-type': 'text/event-stream' } });
    });
    const client = new AbortController();
    const response = await fetch(url, { signal: client.signal });
    expect(response.status).toBe(200);
    client.abort();
    await expect(sawAbort).resolves.toBeUndefined();
  });

  it('close() ends open connections and resolves', async () => {
    const url = await serve(async () => new Response(new ReadableStream({ start: () => undefined }), { headers: { 'content-type': 'text/event-stream' } }));
    const response = await fetch(url);
    const reading = response
      .body!.getReader()
      .read()
      .catch(() => 'closed');
    await server!.close();
    server = undefined;
    await expect(reading).resolves.toBeDefined();
  });
});
