/** The local HTTP server: what the Function URL gives the handler, on node:http. */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_BODY_BYTES } from '../../lambdas/mcp/http-handler.ts';
import { serveFetch, type FetchHandler, type NodeHttpServer } from '../../local/node-http-server.ts';

let server: NodeHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: FetchHandler) {
  server = await serveFetch(handler, { host: '127.0.0.1', port: 0, path: '/mcp' });
  return server.url;
}

describe('serveFetch', () => {
  it('listens on the host it is given and passes method, URL, headers and body through', async () => {
    const url = await serve(async (request) => Response.json({ method: request.method, url: request.url, echo: await request.text(), h: request.headers.get('x-test') }));
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
    expect(JSON.parse(status.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Request body exceeds ${MAX_BODY_BYTES} bytes` } });
    expect(handler).not.toHaveBeenCalled();
  });

  it('streams a response body as it is produced (SSE)', async () => {
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
    });
    const response = await fetch(url);
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe('data: first\n\n');
    release();
    let rest = '';
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest += new TextDecoder().decode(next.value);
    expect(rest).toBe('data: second\n\n');
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
    const reading = response.body!.getReader().read().catch(() => 'closed');
    await server!.close();
    server = undefined;
    await expect(reading).resolves.toBeDefined();
  });
});
