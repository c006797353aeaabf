/**
 * The SDK as OpenTelemetry's standard environment configures it: `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` name the resource, `OTEL_TRACES_SAMPLER` decides what is recorded.
 */
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTracingSdk, type TracingSdk } from '../../lambdas/observability/tracing-sdk.ts';
import { withSpan } from '../../lambdas/observability/tracing.ts';

let sdk: TracingSdk | undefined;
afterEach(async () => {
  await sdk?.shutdown();
  sdk = undefined;
  vi.unstubAllEnvs();
});

function started(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  sdk = startTracingSdk({ serviceName: 'default-name', processors: [new SimpleSpanProcessor({ exporter })], export: false });
  return exporter;
}

describe('the tracing SDK from the environment', () => {
  it('names the service OTEL_SERVICE_NAME says, with OTEL_RESOURCE_ATTRIBUTES beside it', async () => {
    vi.stubEnv('OTEL_SERVICE_NAME', 'my-mcp');
    vi.stubEnv('OTEL_RESOURCE_ATTRIBUTES', 'deployment.environment.name=dev');
    const exporter = started();
    await withSpan('status sync', {}, async () => undefined);
    const [span] = exporter.getFinishedSpans();
    expect(span?.resource.attributes['service.name']).toBe('my-mcp');
    expect(span?.resource.attributes['deployment.environment.name']).toBe('dev');
  });

  it('names it after the process without OTEL_SERVICE_NAME', async () => {
    vi.stubEnv('OTEL_SERVICE_NAME', '');
    const exporter = started();
    await withSpan('status sync', {}, async () => undefined);
    expect(exporter.getFinishedSpans()[0]?.resource.attributes['service.name']).toBe('default-name');
  });

  it('records nothing with OTEL_TRACES_SAMPLER=always_off', async () => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'always_off');
    const exporter = started();
    await withSpan('status sync', {}, async () => undefined);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("follows the caller's sampled flag by default (parent-based): a caller that does not sample gets no spans", async () => {
    const exporter = started();
    await withSpan('tools/call x', { parent: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' } }, async () => undefined);
    await withSpan('tools/call y', { parent: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } }, async () => undefined);
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['tools/call y']);
  });
});
