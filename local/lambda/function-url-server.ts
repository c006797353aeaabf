/**
 * A Lambda Function URL in front of a local function, with the template's AuthType, InvokeMode
 * and Cors. Every path reaches the function, as in AWS. RESPONSE_STREAM sends the prelude and
 * each body chunk as the function writes it; BUFFERED sends the whole response once the
 * invocation has ended, so server-sent events arrive only at the end, as they do in AWS.
 * Under AWS_IAM a request must carry a SigV4 signature (service lambda) that re-signing with
 * the caller's secret reproduces, and the caller must be allowed lambda:InvokeFunctionUrl.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeployedStack } from '../assembly/deployed-stack.ts';
import { functionUrlEvent, functionUrlId, type FunctionUrlCaller } from './function-url-event.ts';
import { corsPreflight, corsResponseHeaders, type FunctionUrlCors } from './function-url-cors.ts';
import { verifySigV4, type SigV4Authority } from './function-url-sigv4.ts';
import type { LocalFunction, StreamingInvocation } from './local-function.ts';

/** Lambda's limit on an invocation payload (request and buffered response): 6 MB. */
export const FUNCTION_URL_PAYLOAD_LIMIT = 6_291_456;

const FORBIDDEN = '{"Message":"Forbidden"}';
const INTERNAL_ERROR = '{"Message":"Internal Server Error"}';
const TOO_LARGE = `{"Message":"Request must be smaller than ${FUNCTION_URL_PAYLOAD_LIMIT} bytes for the InvokeFunction operation"}`;

type AuthorizeResult = { allowed: true } | { allowed: false; message: string };

export type FunctionUrlDecision = { allowed: true } | { allowed: false; message: string };

/** What the URL needs of the IAM authority (local/iam/iam-authority.ts): who signed, and may they invoke. */
export interface FunctionUrlAuthority extends SigV4Authority {
  authorize(request: {
    principalArn: string;
    action: string;
    resource: string;
    context?: Record<string, string | string[]>;
  }): AuthorizeResult | Promise<AuthorizeResult>;
}

export interface FunctionUrlServerOptions {
  url: NonNullable<DeployedStack['functionUrl']>;
  fn: LocalFunction;
  functionArn: string;
  host: string;
  /** 0 for any free port. */
  port: number;
  /** The path printed in the URL (every path is served). @default '/' */
  path?: string;
  /** Required under AWS_IAM: verifies SigV4 and authorizes lambda:InvokeFunctionUrl. */
  iam?: FunctionUrlAuthority;
  /** Why a request was refused or failed (not sent to the client, as in AWS). @default nothing */
  onLog?: (line: string) => void;
  /** Answers a request before the URL does (a local check AWS has no need of); `undefined` lets it through. @default nothing */
  screen?: (request: IncomingMessage) => Response | undefined;
}

/** Serves the Function URL on node:http until closed. */
export async function serveFunctionUrl(options: FunctionUrlServerOptions): Promise<{ url: URL; close(): Promise<void> }> {
  if (options.url.authType === 'AWS_IAM' && !options.iam) throw new Error('serveFunctionUrl: an AWS_IAM Function URL needs an IAM authority (iam)');
  const urlId = functionUrlId(options.functionArn);
  const server = createServer((request, response) => {
    handle(request, response, options, urlId).catch((error: unknown) => {
      options.onLog?.(`Function URL: ${String(error)}`);
      if (!response.headersSent) send(response, 502, INTERNAL_ERROR);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const path = options.path ?? '/';
  return {
    url: new URL(`http://${host}:${port}${path.startsWith('/') ? path : `/${path}`}`),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: FunctionUrlServerOptions, urlId: string): Promise<void> {
  const screened = options.screen?.(request);
  if (screened) return send(response, screened.status, Buffer.from(await screened.arrayBuffer()), Object.fromEntries(screened.headers));
  const cors = options.url.cors as FunctionUrlCors | undefined;
  const body = await readBody(request, FUNCTION_URL_PAYLOAD_LIMIT);
  if (!body) return send(response, 413, TOO_LARGE, { connection: 'close' });

  // A CORS preflight is the URL's own answer when the template configures CORS; the function never sees it.
  const preflight = cors ? corsPreflight(cors, request) : undefined;
  if (preflight) return send(response, 200, '', preflight);

  let caller: FunctionUrlCaller | undefined;
  if (options.url.authType === 'AWS_IAM') {
    const iam = options.iam;
    if (!iam) throw new Error("an AWS_IAM Function URL needs the IAM authority that issued its callers' keys");
    const verified = await verifySigV4(request, body, iam);
    if (!verified.ok) {
      options.onLog?.(`Function URL: 403 ${verified.reason}`);
      return send(response, 403, FORBIDDEN, { 'x-amzn-errortype': 'AccessDeniedException' });
    }
    const decision = await iam.authorize({
      principalArn: verified.caller.userArn,
      action: 'lambda:InvokeFunctionUrl',
      resource: options.functionArn,
      context: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' },
    });
    if (!decision.allowed) {
      options.onLog?.(`Function URL: 403 ${decision.message}`);
      return send(response, 403, FORBIDDEN, { 'x-amzn-errortype': 'AccessDeniedException' });
    }
    caller = verified.caller;
  }

  const port = request.socket.localPort ?? 0;
  const event = functionUrlEvent(
    {
      method: request.method ?? 'GET',
      target: request.url ?? '/',
      rawHeaders: [
        ...withoutForwarding(request.rawHeaders),
        'x-amzn-trace-id',
        traceId(),
        'x-forwarded-for',
        request.socket.remoteAddress ?? '127.0.0.1',
        'x-forwarded-proto',
        'http',
        'x-forwarded-port',
        String(port),
      ],
      body,
      sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
      httpVersion: request.httpVersion,
    },
    { urlId, ...(caller ? { caller } : {}) },
  );
  if (Buffer.byteLength(JSON.stringify(event)) > FUNCTION_URL_PAYLOAD_LIMIT) return send(response, 413, TOO_LARGE);

  const extra = { ...(cors ? corsResponseHeaders(cors, request) : {}), 'x-amzn-requestid': event.requestContext.requestId };
  let invocation: StreamingInvocation;
  try {
    invocation = await options.fn.invokeStreaming(event);
  } catch (error) {
    options.onLog?.(`Function URL: 502 ${String(error)}`);
    return send(response, 502, INTERNAL_ERROR);
  }
  if (invocation.result !== undefined || !invocation.body) {
    const buffered = bufferedResponse(invocation.result);
    if (buffered.body.length > FUNCTION_URL_PAYLOAD_LIMIT) return send(response, 502, INTERNAL_ERROR);
    return send(response, buffered.statusCode, buffered.body, merge(buffered.headers, buffered.cookies, cors, extra));
  }
  const headers = merge(invocation.prelude.headers ?? {}, invocation.prelude.cookies ?? [], cors, extra);
  const status = invocation.prelude.statusCode ?? 200;
  const reader = invocation.body.getReader();
  response.once('close', () => void reader.cancel().catch(() => undefined));

  if (options.url.invokeMode === 'BUFFERED') {
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        size += next.value.byteLength;
        if (size > FUNCTION_URL_PAYLOAD_LIMIT)
          throw new Error(`Response payload size exceeded maximum allowed payload size (${FUNCTION_URL_PAYLOAD_LIMIT} bytes)`);
        chunks.push(next.value);
      }
    } catch (error) {
      options.onLog?.(`Function URL: 502 ${String(error)}`);
      return send(response, 502, INTERNAL_ERROR);
    }
    return send(response, status, Buffer.concat(chunks), headers);
  }

  response.writeHead(status, headers);
  response.flushHeaders();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) response.write(next.value);
    response.end();
  } catch (error) {
    // The function failed after the prelude went out: the client sees the stream break, as in AWS.
    options.onLog?.(`Function URL: stream failed: ${String(error)}`);
    response.destroy();
  }
}

/** The body, or undefined past `limit` bytes. */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      request.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A buffered function's result as the URL reads it: a `statusCode` object is the response; anything else a 200 JSON body. */
export function bufferedResponse(result: unknown): { statusCode: number; headers: Record<string, string>; cookies: string[]; body: Buffer } {
  if (typeof result === 'object' && result !== null && typeof (result as { statusCode?: unknown }).statusCode === 'number') {
    const value = result as { statusCode: number; headers?: Record<string, unknown>; cookies?: unknown[]; body?: unknown; isBase64Encoded?: boolean };
    const headers = Object.fromEntries(Object.entries(value.headers ?? {}).map(([name, header]) => [name.toLowerCase(), String(header)]));
    headers['content-type'] ??= 'application/json';
    const text = typeof value.body === 'string' ? value.body : value.body === undefined || value.body === null ? '' : JSON.stringify(value.body);
    return {
      statusCode: value.statusCode,
      headers,
      cookies: (value.cookies ?? []).map(String),
      body: value.isBase64Encoded ? Buffer.from(text, 'base64') : Buffer.from(text),
    };
  }
  const body = typeof result === 'string' ? result : result === undefined || result === null ? '' : JSON.stringify(result);
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, cookies: [], body: Buffer.from(body) };
}

/** The function's headers with its cookies as set-cookie; with CORS configured, the URL's CORS headers replace the function's. */
function merge(
  headers: Record<string, string>,
  cookies: string[],
  cors: FunctionUrlCors | undefined,
  extra: Record<string, string>,
): Record<string, string | string[]> {
  const merged: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (cors && lower.startsWith('access-control-')) continue;
    merged[lower] = value;
  }
  if (cookies.length > 0) merged['set-cookie'] = cookies;
  return { ...merged, ...extra };
}

function send(response: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string | string[]> = {}): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const type = typeof body === 'string' && body.startsWith('{') ? { 'content-type': 'application/json' } : {};
  response.writeHead(status, { ...type, ...headers, 'content-length': String(bytes.length) });
  response.end(bytes);
}

/** The URL sets these itself. */
function withoutForwarding(rawHeaders: string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] ?? '';
    const value = rawHeaders[index + 1] ?? '';
    const lower = name.toLowerCase();
    if (lower === 'x-amzn-trace-id' || lower === 'x-forwarded-for' || lower === 'x-forwarded-proto' || lower === 'x-forwarded-port') continue;
    kept.push(name, value);
  }
  return kept;
}

/** An X-Ray trace id: Root=1-<epoch seconds, hex>-<96 random bits, hex>. */
function traceId(): string {
  const random = Array.from(crypto.getRandomValues(new Uint8Array(12)), (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${random}`;
}
