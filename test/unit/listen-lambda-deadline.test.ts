/**
 * A listen stream in the Lambda handler's shape (streamingFunctionUrlHandler with the
 * invocation's deadline, as lambdas/handlers/mcp-http.ts wires it), over in-memory ports:
 * it ends cleanly before the invocation's remaining time runs out, with no wake-up signal
 * (AWS has none), and the client can listen again.
 */
import { Writable } from 'node:stream';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { invocationDeadlineOf, streamingFunctionUrlHandler, type HttpPrelude, type LambdaStreamingRuntime, type ResponseStream } from '../../lambdas/aws/function-url-adapter.ts';
import { withInvocationDeadline } from '../../lambdas/mcp/listen/listen-deadline.ts';
import { InMemoryRecordStore } from '../../lambdas/operations/in-memory-record-store.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { MODERN_VERSION } from '../support/raw-mcp.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'lambda-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': EXT,
};
const MARGIN_MS = 5000;

function event(method: string, id: number, params: Record<string, unknown>): LambdaFunctionURLEvent {
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

/** A runtime whose response stream collects the body (the prelude aside). */
function collectingRuntime() {
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
  return { runtime, preludes };
}

function collector() {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
  });
  return { stream: stream as unknown as ResponseStream, text: () => Buffer.concat(chunks).toString('utf8') };
}

const messagesOf = (text: string) => text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));

describe('listen in the Lambda handler', () => {
  it("ends cleanly before the invocation's remaining time runs out, and a re-listen is acknowledged again", async () => {
    const app = createAsyncMcpApp({
      store: new InMemoryRecordStore(),
      engine: new FakeWorkflowEngine(),
      catalog: createToolCatalog([testTool({ name: 'job' })]),
      limits: TEST_LIMITS,
      secretKey: TEST_SECRET_KEY,
      logger: { error: () => undefined, warn: () => undefined },
      listen: { deadlineMarginMs: MARGIN_MS, pollIntervalMs: 200 },
    });
    const { runtime, preludes } = collectingRuntime();
    const handler = streamingFunctionUrlHandler((request) => app.fetch(request, 'arn:aws:iam::123456789012:role/agent'), runtime, (context, invocation) =>
      withInvocationDeadline(invocationDeadlineOf(context), invocation),
    );
    const invoke = async (lambdaEvent: LambdaFunctionURLEvent, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      const out = collector();
      await handler(lambdaEvent, out.stream, { awsRequestId: 'r', getRemainingTimeInMillis: () => deadline - Date.now() });
      return { finishedBeforeDeadlineMs: deadline - Date.now(), messages: messagesOf(out.text()), text: out.text() };
    };

    const created = await invoke(event('tools/call', 1, { name: 'job', arguments: {} }), 30_000);
    const taskId = JSON.parse(created.text).result.taskId as string;
    expect(taskId).toBeTruthy();

    for (const id of [2, 3]) {
      const listened = await invoke(event('subscriptions/listen', id, { notifications: { taskIds: [taskId] } }), MARGIN_MS + 800);
      expect(preludes.at(-1)).toMatchObject({ statusCode: 200, headers: { 'content-type': 'text/event-stream', 'x-accel-buffering': 'no' } });
      expect(listened.messages[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { taskIds: [taskId] } } });
      expect(listened.messages[1]).toMatchObject({ method: 'notifications/tasks', params: { taskId, status: 'working' } });
      expect(listened.messages.at(-1)).toEqual({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': id } } });
      // The stream ended on its own, with the margin still left on the invocation.
      expect(listened.finishedBeforeDeadlineMs).toBeGreaterThan(MARGIN_MS / 2);
    }
  });
});
