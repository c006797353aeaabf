/**
 * Lambda Function URL (payload format 2.0) event → web `Request`, and web `Response` →
 * the Function URL's response stream (invoke mode RESPONSE_STREAM). Translation only: the
 * handler in between is the same fetch-style function the local server runs.
 *
 * The body is written chunk by chunk as the `Response` produces it, so a server-sent event
 * (a server-to-client request, a progress notification) reaches the client while the call
 * still waits. A BUFFERED Function URL would hold every event until the response ended.
 */
import type { LambdaFunctionURLEvent } from 'aws-lambda';

/** Builds the `Request` a Function URL event describes. */
export function toWebRequest(event: LambdaFunctionURLEvent): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    // Function URLs already join repeated headers with commas.
    if (value !== undefined) headers.set(name, value);
  }
  // Format 2.0 moves cookies out of the headers into their own array.
  if (event.cookies && event.cookies.length > 0) {
    const existing = headers.get('cookie');
    headers.set('cookie', [...(existing ? [existing] : []), ...event.cookies].join('; '));
  }
  const host = event.requestContext.domainName || headers.get('host') || 'localhost';
  const protocol = headers.get('x-forwarded-proto') ?? 'https';
  const query = event.rawQueryString ? `?${event.rawQueryString}` : '';
  const method = event.requestContext.http.method.toUpperCase();
  const init: RequestInit = { method, headers };
  // A GET or HEAD with a body is a TypeError for `Request`.
  if (event.body !== undefined && event.body !== null && method !== 'GET' && method !== 'HEAD') {
    init.body = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
  }
  return new Request(`${protocol}://${host}${event.rawPath || '/'}${query}`, init);
}

/** The Node.js Writable the Lambda runtime hands a streaming handler, as far as this adapter uses it. */
export interface ResponseStream {
  write(chunk: Uint8Array): boolean;
  end(callback?: () => void): void;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  once(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'drain' | 'close' | 'error', listener: (...args: never[]) => void): unknown;
}

/** The Lambda context, as far as this adapter's callers use it. */
export interface InvocationContext {
  awsRequestId?: string;
  /** Milliseconds left before the function's timeout ends the invocation. */
  getRemainingTimeInMillis?(): number;
}

/** A handler the runtime calls with the event, the response stream to write to, and the invocation's context. */
export type StreamingHandler<TEvent> = (event: TEvent, responseStream: ResponseStream, context?: InvocationContext) => Promise<void>;

/**
 * When the invocation's time runs out (epoch ms), from the context's remaining time;
 * `undefined` without one. A long-lived response (a listen stream) ends before it.
 */
export function invocationDeadlineOf(context: InvocationContext | undefined): number | undefined {
  const remaining = context?.getRemainingTimeInMillis?.();
  return typeof remaining === 'number' && Number.isFinite(remaining) ? Date.now() + remaining : undefined;
}

/**
 * Runs one whole invocation (the fetch and the body's last byte) inside `around`: a
 * per-request log context, and a metrics flush once the response stream has ended.
 */
export type InvocationWrapper = (context: InvocationContext | undefined, invocation: () => Promise<void>) => Promise<void>;

/** Status, headers and cookies: what Lambda sends the client before the body of a streamed response. */
export interface HttpPrelude {
  statusCode: number;
  headers: Record<string, string>;
  cookies?: string[];
}

/**
 * The `awslambda` global of the Lambda Node.js runtime, as far as response streaming uses it
 * (declared here: it exists only inside that runtime).
 */
export interface LambdaStreamingRuntime {
  /** Marks the handler as streaming and returns it. */
  streamifyResponse<TEvent>(handler: StreamingHandler<TEvent>): StreamingHandler<TEvent>;
  HttpResponseStream: { from(responseStream: ResponseStream, prelude: HttpPrelude): ResponseStream };
}

/** The runtime's `awslambda` global; a clear error anywhere else (a missing global fails the cold start, not each request). */
export function lambdaStreamingRuntime(): LambdaStreamingRuntime {
  const runtime = (globalThis as unknown as { awslambda?: Partial<LambdaStreamingRuntime> }).awslambda;
  if (typeof runtime?.streamifyResponse !== 'function' || typeof runtime.HttpResponseStream?.from !== 'function') {
    throw new Error(
      'awslambda.streamifyResponse is not available: this handler runs in the AWS Lambda Node.js runtime, behind a Function URL in RESPONSE_STREAM mode',
    );
  }
  return runtime as LambdaStreamingRuntime;
}

/** The fetch-style handler both runtimes serve, given the event for what only Lambda knows (the caller). */
export type FunctionUrlFetch = (request: Request, event: LambdaFunctionURLEvent) => Promise<Response>;

/** A Lambda handler, wrapped by `awslambda.streamifyResponse`, that streams `fetch`'s responses. */
export function streamingFunctionUrlHandler(
  fetch: FunctionUrlFetch,
  runtime: LambdaStreamingRuntime = lambdaStreamingRuntime(),
  around: InvocationWrapper = (_context, invocation) => invocation(),
): StreamingHandler<LambdaFunctionURLEvent> {
  return runtime.streamifyResponse<LambdaFunctionURLEvent>((event, responseStream, context) =>
    around(context, async () => {
      const response = await fetch(toWebRequest(event), event);
      await writeResponse(response, runtime.HttpResponseStream.from(responseStream, preludeOf(response)));
    }),
  );
}

/** The prelude of a `Response`: `set-cookie` headers become `cookies`, repeated headers are comma-joined. */
export function preludeOf(response: Response): HttpPrelude {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  return { statusCode: response.status, headers, ...(cookies.length > 0 ? { cookies } : {}) };
}

/**
 * Writes the body to `stream` as it arrives and ends it. The prelude goes out with the first
 * write, so an empty write sends status and headers at once, even for a body that is empty
 * or slow to start. A body that fails, or a stream that fails, fails the invocation, so the
 * runtime reports it instead of ending a truncated response as if it were whole.
 */
export async function writeResponse(response: Response, stream: ResponseStream): Promise<void> {
  const reader = response.body?.getReader();
  let failure: Error | undefined;
  const onError = (error: Error) => {
    failure = error;
    // Nobody can read the rest: stop producing it (an SSE stream waiting on the store stops too).
    reader?.cancel(error).catch(() => undefined);
  };
  stream.once('error', onError);
  try {
    let more = stream.write(new Uint8Array(0));
    for (let next = await reader?.read(); next && !next.done; next = await reader?.read()) {
      if (failure) throw failure;
      if (!more) await drained(stream);
      more = stream.write(next.value);
    }
    if (failure) throw failure;
    await new Promise<void>((resolve) => stream.end(resolve));
  } catch (error) {
    await reader?.cancel(error).catch(() => undefined);
    throw failure ?? error;
  } finally {
    stream.off('error', onError);
  }
}

/** Resolves when the stream can take more; rejects if it fails or closes first. */
function drained(stream: ResponseStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      stream.off('drain', onDrain);
      stream.off('error', onFail);
      stream.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => done();
    const onFail = (error: Error) => done(error);
    const onClose = () => done(new Error('The response stream closed before the body was written'));
    stream.once('drain', onDrain);
    stream.once('error', onFail);
    stream.once('close', onClose);
  });
}
