/**
 * Serves a fetch-style handler over node:http with `@hono/node-server`: the local
 * stand-in for the Lambda Function URL. Request bodies stream into the handler, which
 * reads them with a cap; a body declared too large is refused before any of it is read.
 * Responses stream as they are produced, as the deployed Function URL (RESPONSE_STREAM)
 * does; BUFFERED holds each one until it ends, as a buffered Function URL would.
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type Http2Bindings, type HttpBindings } from '@hono/node-server';
import { MAX_BODY_BYTES } from '../lambdas/mcp/edge/http-handler.ts';

export type FetchHandler = (request: Request, incoming: IncomingMessage) => Promise<Response>;

export interface NodeHttpServer {
  url: URL;
  close(): Promise<void>;
}

/** The Function URL invoke modes: how a response reaches the client. */
export type InvokeMode = 'RESPONSE_STREAM' | 'BUFFERED';

export interface ServeOptions {
  host: string;
  port: number;
  path: string;
  /**
   * `RESPONSE_STREAM` writes each chunk as the handler produces it (server-sent events reach
   * the client at once); `BUFFERED` writes the whole response when it has ended.
   * @default 'RESPONSE_STREAM'
   */
  invokeMode?: InvokeMode;
}

/** Serves `handler` on `host:port`; the URL it returns names `path`. */
export async function serveFetch(handler: FetchHandler, options: ServeOptions): Promise<NodeHttpServer> {
  const buffered = options.invokeMode === 'BUFFERED';
  const server = createAdaptorServer({
    // The handler gets the platform's own Request and Response, as in Lambda.
    overrideGlobalObjects: false,
    fetch: (request: Request, bindings: HttpBindings | Http2Bindings) => {
      const env = bindings as HttpBindings; // An HTTP/1.1 server: never HTTP/2 bindings.
      if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) return tooLarge(env);
      return handler(request, env.incoming)
        .then((response) => (buffered ? bufferedCopy(response) : response))
        .catch((error: unknown) => {
          console.error(JSON.stringify({ level: 'error', message: 'local http server failure', error: String(error) }));
          return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }, { status: 500 });
        });
    },
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
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The response once its body has ended: nothing reaches the client before then. */
async function bufferedCopy(response: Response): Promise<Response> {
  const body = await response.arrayBuffer();
  return new Response(response.status === 204 || response.status === 304 ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** 413 before reading a byte of the body; the connection closes instead of draining it. */
function tooLarge(env: HttpBindings): Response {
  env.outgoing.once('finish', () => env.incoming.destroy());
  return Response.json(
    { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Request body exceeds ${MAX_BODY_BYTES} bytes` } },
    { status: 413, headers: { connection: 'close' } },
  );
}
