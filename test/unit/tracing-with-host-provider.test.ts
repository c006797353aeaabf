/**
 * A tracer provider registered by the function's host (the ADOT Lambda layer's wrapper, or a
 * project's own SDK) turns our spans on without our SDK: they go to that provider, and off
 * again once it is unregistered.
 */
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { tracingOn, withSpan } from '../../lambdas/observability/tracing.ts';

afterEach(() => trace.disable());

describe("a host's tracer provider", () => {
  it('turns tracing on, receives the spans, and off once it is unregistered', async () => {
    expect(tracingOn()).toBe(false);
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    expect(tracingOn()).toBe(true);
    await withSpan('status sync', {}, async () => undefined);
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['status sync']);
    trace.disable();
    expect(tracingOn()).toBe(false);
    await provider.shutdown();
  });
});
