/**
 * With tracing off (no OpenTelemetry environment), the request path costs nothing: a call and
 * a poll that carry SEP-414 trace context in `_meta` make no call into OpenTelemetry, the SDK
 * is not started, the record keeps no trace, and the poll is still answered without an SDK server.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { tracingOn } from '../../lambdas/observability/tracing.ts';
import { tracingRequested } from '../../lambdas/observability/tracing-setup.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { modernAppRequest } from '../support/modern-app-request.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const REVISION = '2026-07-28';
const TRACE = {
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  tracestate: 'vendor=opaque',
  baggage: 'user=someone',
};
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientInfo': { name: 'tracing-off', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  ...TRACE,
};

/** The request with the SEP-414 trace context in its header too. */
const post = (body: { method: string; params: Record<string, unknown> }): Request =>
  modernAppRequest({ jsonrpc: '2.0', id: 1, ...body }, { traceparent: TRACE.traceparent });

afterEach(() => vi.restoreAllMocks());

describe('tracing off', () => {
  it('the standard environment without an endpoint or exporter asks for no tracing', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });

  it('a call and a poll with trace context in _meta make no OpenTelemetry call, and the poll is answered without an SDK server', async () => {
    const store = new InMemoryRecordStore();
    const app = createAsyncMcpApp({
      store,
      engine: new FakeWorkflowEngine(),
      catalog: createToolCatalog([testTool({ name: 'analyze' })]),
      secretKey: TEST_SECRET_KEY,
      logger: { error: () => undefined, warn: () => undefined },
    });
    const calls = [
      vi.spyOn(trace, 'getTracer'),
      vi.spyOn(trace, 'getActiveSpan'),
      vi.spyOn(propagation, 'extract'),
      vi.spyOn(propagation, 'inject'),
      vi.spyOn(context, 'active'),
      vi.spyOn(context, 'with'),
    ];
    const started = await app.fetch(post({ method: 'tools/call', params: { name: 'analyze', arguments: {}, _meta: ENVELOPE } }), 'alice');
    const taskId = ((await started.json()) as { result: { taskId: string } }).result.taskId;
    const connect = vi.spyOn(Server.prototype, 'connect');
    const polled = await app.fetch(post({ method: 'tasks/get', params: { taskId, _meta: ENVELOPE } }), 'alice');
    expect(((await polled.json()) as { result: { status: string } }).result.status).toBe('working');
    expect(connect).not.toHaveBeenCalled();
    for (const call of calls) expect(call).not.toHaveBeenCalled();
    expect(tracingOn()).toBe(false);
    expect((await store.get({ ownerId: ownerIdFor('alice'), token: taskId }))?.trace).toBeUndefined();
  });
});
