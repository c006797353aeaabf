/**
 * The Lambda handler's shape for listen tests: the app over in-memory ports, served by
 * streamingFunctionUrlHandler with the invocation's deadline as lambdas/handlers/mcp-http.ts
 * wires it, Function URL events for one principal, and a response stream that collects the body.
 */
import { Writable } from 'node:stream';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { createAsyncMcpApp, type AsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import {
  invocationDeadlineOf,
  streamingFunctionUrlHandler,
  type HttpPrelude,
  type LambdaStreamingRuntime,
  type ResponseStream,
} from '../../lambdas/aws/function-url-adapter.ts';
import type { ListenOptions } from '../../lambdas/mcp/listen/listen-handler.ts';
import { withInvocationDeadline } from '../../lambdas/mcp/listen/listen-deadline.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { MODERN_VERSION } from '../support/raw-mcp.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

export const PRINCIPAL = 'arn:aws:iam::123456789012:role/agent';

const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'lambda-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

/** A Function URL event carrying one 2026-07-28 request that declares the Tasks extension. */
export function functionUrlEvent(method: string, id: number, params: Record<string, unknown>): LambdaFunctionURLEvent {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      host: 'abc123.lambda-url.us-east-1.on.aws',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } }),
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.lambda-url.us-east-1.on.aws',
      domainPrefix: 'abc123',
      http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '203.0.113.1', userAgent: 'test' },
      requestId: `req-${id}`,
      routeKey: '$default',
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: 1_767_225_600_000,
    },
  };
}

export const listenEvent = (id: number, taskIds: string[]) => functionUrlEvent('subscriptions/listen', id, { notifications: { taskIds } });

/** The JSON-RPC messages of an SSE body. */
export const messagesOf = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));

export interface Invocation {
  /** The invocation's deadline (epoch ms, on the clock the test runs). */
  deadline: number;
  /** When the handler returned (epoch ms). */
  returnedAt: number;
  text: string;
  messages: ReturnType<typeof messagesOf>;
}

/** The app in the Lambda handler, over an in-memory store the test may slow down, with one async tool, `job`. */
export function lambdaApp(options: { store?: InMemoryRecordStore; listen?: ListenOptions } = {}) {
  const store = options.store ?? new InMemoryRecordStore();
  const app: AsyncMcpApp = createAsyncMcpApp({
    store,
    engine: new FakeWorkflowEngine(),
    catalog: createToolCatalog([testTool({ name: 'job' })]),
    limits: TEST_LIMITS,
    secretKey: TEST_SECRET_KEY,
    logger: { error: () => undefined, warn: () => undefined },
    ...(options.listen ? { listen: options.listen } : {}),
  });
  const preludes: HttpPrelude[] = [];
  const runtime: LambdaStreamingRuntime = {
    streamifyResponse: (handler) => handler,
    HttpResponseStream: {
      from(stream, prelude) {
        preludes.push(prelude);
        return stream;
      },
    },
  };
  const handler = streamingFunctionUrlHandler(
    (request) => app.fetch(request, PRINCIPAL),
    runtime,
    (context, invocation) => withInvocationDeadline(invocationDeadlineOf(context), invocation),
  );
  /** One invocation with `timeoutMs` left on it; resolves when the handler returns. */
  const invoke = async (event: LambdaFunctionURLEvent, timeoutMs: number): Promise<Invocation> => {
    const deadline = Date.now() + timeoutMs;
    const chunks: Buffer[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(Buffer.from(chunk));
        callback();
      },
    });
    await handler(event, stream as unknown as ResponseStream, { awsRequestId: 'r', getRemainingTimeInMillis: () => deadline - Date.now() });
    const returnedAt = Date.now();
    const text = Buffer.concat(chunks).toString('utf8');
    return { deadline, returnedAt, text, messages: messagesOf(text) };
  };
  /** Starts `job` and returns its task id. */
  const startJob = async (): Promise<string> => {
    const created = await invoke(functionUrlEvent('tools/call', 1, { name: 'job', arguments: {} }), 30_000);
    const taskId: unknown = JSON.parse(created.text).result?.taskId;
    if (typeof taskId !== 'string') throw new Error(`tools/call returned no task id: ${created.text}`);
    return taskId;
  };
  return { app, store, preludes, invoke, startJob };
}
