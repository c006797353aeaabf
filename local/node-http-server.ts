/**
 * Serves a fetch-style handler with node:http: the local stand-in for the Lambda
 * Function URL. Bodies are read with a cap, so an oversized request is refused
 * without buffering it all.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_BODY_BYTES } from '../lambdas/mcp/http-handler.ts';

export type FetchHandler = (request: Request, incoming: IncomingMessage) => Promise<Response>;

export interface NodeHttpServer {
  url: URL;
  close(): Promise<void>;
}

export async function serveFetch(handler: FetchHandler, options: { host: string; port: number; path: string }): Promise<NodeHttpServer> {
  const server: Server = createServer((req, res) => {
    handle(handler, req, res).catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', message: 'local http server failure', error: String(error) }));
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: new URL(`http://${host}:${port}${options.path}`),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(handler: FetchHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  if (body === 'too-large') {
    res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Request body exceeds ${MAX_BODY_BYTES} bytes` } }));
    req.destroy();
    return;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
    else if (value !== undefined) headers.set(name, value);
  }
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    signal: controller.signal,
    ...(body.length > 0 && req.method !== 'GET' && req.method !== 'HEAD' ? { body: new Uint8Array(body) } : {}),
  });
  const response = await handler(request, req);
  res.writeHead(response.status, [...response.headers].flat());
  if (!response.body) {
    res.end();
    return;
  }
  // Stream (SSE responses arrive in pieces).
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
  res.end();
}

async function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) return 'too-large';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return 'too-large';
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
