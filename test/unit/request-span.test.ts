/**
 * An MCP request's span, as OpenTelemetry's MCP conventions name and attribute it: SERVER,
 * `{mcp.method.name} {target}`, the child of the `traceparent` in `_meta` (SEP-414) before the
 * HTTP header's, and only the server's own tool names as targets.
 */
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import type { TracingSdk } from '../../lambdas/observability/tracing-sdk.ts';
import { startTracing } from '../../lambdas/observability/tracing-setup.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const REVISION = '2026-07-28';
const META_PARENT = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
const HEADER_PARENT = { traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', spanId: 'bbbbbbbbbbbbbbbb' };
const traceparent = (parent: { traceId: string; spanId: string }) => `00-${parent.traceId}-${parent.spanId}-01`;

const exporter = new InMemorySpanExporter();
let sdk: TracingSdk | undefined;
beforeAll(async () => {
  // The waterfall's way in: processors of its own, no OTLP exporter.
  sdk = await startTracing('request-span-test', [new SimpleSpanProcessor({ exporter })], {});
});
afterAll(async () => {
  await sdk?.shutdown();
});

const app = createAsyncMcpApp({
  store: new InMemoryRecordStore(),
  engine: new FakeWorkflowEngine(),
  catalog: createToolCatalog([testTool({ name: 'analyze' })]),
  secretKey: TEST_SECRET_KEY,
  logger: { error: () => undefined, warn: () => undefined },
});

function call(name: string, headers: Record<string, string> = {}, meta: Record<string, unknown> = {}) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': REVISION,
    'io.modelcontextprotocol/clientInfo': { name: 'span-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    ...meta,
  };
  return app.fetch(
    new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': REVISION,
        'mcp-method': 'tools/call',
        'mcp-name': name,
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name, arguments: { secret: 'arg-value-xyz' }, _meta } }),
    }),
    'alice',
  );
}

describe('the request span', () => {
  it('is a SERVER span named and attributed by the MCP conventions, the child of the traceparent in _meta rather than the header', async () => {
    exporter.reset();
    await call('analyze', { traceparent: traceparent(HEADER_PARENT) }, { traceparent: traceparent(META_PARENT) });
    const [span] = exporter.getFinishedSpans().filter((s) => s.name.startsWith('tools/call'));
    expect(span?.name).toBe('tools/call analyze');
    expect(span?.kind).toBe(SpanKind.SERVER);
    expect(span?.spanContext().traceId).toBe(META_PARENT.traceId);
    expect(span?.parentSpanContext?.spanId).toBe(META_PARENT.spanId);
    expect(span?.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'analyze',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '41',
      'mcp.protocol.version': REVISION,
    });
    expect(JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes))).not.toContain('arg-value-xyz');
  });

  it('takes the HTTP traceparent header when _meta has none', async () => {
    exporter.reset();
    await call('analyze', { traceparent: traceparent(HEADER_PARENT) });
    const [span] = exporter.getFinishedSpans().filter((s) => s.name.startsWith('tools/call'));
    expect(span?.parentSpanContext?.spanId).toBe(HEADER_PARENT.spanId);
  });

  it('names no target a client made up: a tool the server does not have stays out of the span', async () => {
    exporter.reset();
    await call('user@example.com-report');
    const [span] = exporter.getFinishedSpans().filter((s) => s.name.startsWith('tools/call'));
    expect(span?.name).toBe('tools/call');
    expect(span?.attributes['gen_ai.tool.name']).toBeUndefined();
  });
});
