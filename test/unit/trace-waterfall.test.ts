/**
 * `npm start -- --trace`: the waterfall of an operation's spans is printed once status sync's
 * terminal span ends, each span indented under its parent with its offset and duration.
 */
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { type ReadableSpan, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it, vi } from 'vitest';
import { renderWaterfall, TraceWaterfall } from '../../local/trace-waterfall.ts';

describe('the --trace waterfall', () => {
  it("prints a trace's spans, children indented under their parents, once its operation has ended", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const printed: string[] = [];
      const provider = new TracerProvider({ spanProcessors: [new TraceWaterfall((text) => printed.push(text))] });
      const tracer = provider.getTracer('test');
      const request = tracer.startSpan('tools/call analyze_dataset', {}, ROOT_CONTEXT);
      const inRequest = trace.setSpan(ROOT_CONTEXT, request);
      const execution = tracer.startSpan('execution analyze_dataset', {}, inRequest);
      tracer.startSpan('invoke plan_dataset_chunks', {}, trace.setSpan(ROOT_CONTEXT, execution)).end();
      execution.end();
      request.end();
      expect(printed).toEqual([]);
      tracer.startSpan('status sync', { attributes: { 'async_mcp.operation.status': 'completed' } }, inRequest).end();
      expect(printed).toEqual([]);
      await vi.advanceTimersByTimeAsync(300);
      expect(printed).toHaveLength(1);
      const lines = (printed[0] as string).split('\n');
      expect(lines[0]).toBe(`trace ${request.spanContext().traceId} (4 spans)`);
      expect(lines.slice(1).map((line) => line.replace(/^\s+[\d.]+ ms\s+[\d.]+ ms {2}/, ''))).toEqual([
        'tools/call analyze_dataset',
        '  execution analyze_dataset',
        '    invoke plan_dataset_chunks',
        '  status sync',
      ]);
      await provider.shutdown();
    } finally {
      vi.useRealTimers();
    }
  });

  it('renders a span whose parent is remote (the caller) at the top level', () => {
    const provider = new TracerProvider();
    const span = provider.getTracer('test').startSpan(
      'tasks/get',
      {},
      trace.setSpanContext(ROOT_CONTEXT, {
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        spanId: '00f067aa0ba902b7',
        traceFlags: 1,
        isRemote: true,
      }),
    );
    span.end();
    expect(renderWaterfall([span as unknown as ReadableSpan]).split('\n')[1]).toMatch(/ms {2}tasks\/get$/);
  });
});
