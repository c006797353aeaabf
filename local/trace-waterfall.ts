/**
 * `npm start -- --trace`: each finished operation's spans as a short waterfall in the
 * console (name, offset, duration, indented by parent), for a developer without a collector.
 * A span processor in the server's process: it needs no OTLP endpoint.
 */
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { OPERATION_END_ATTRIBUTE } from '../lambdas/observability/span-names.ts';

// Spans that end just after the operation's end (the request that answered it) still make its picture.
const SETTLE_MS = 250;
// A trace whose operation never ends (the server stopped first) is forgotten after this long.
const FORGET_AFTER_MS = 15 * 60_000;

/** A processor that keeps each trace's spans and prints the trace when its operation ends. */
export class TraceWaterfall implements SpanProcessor {
  private readonly traces = new Map<string, { spans: ReadableSpan[]; since: number }>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly print: (text: string) => void = (text) => console.log(text)) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    const traceId = span.spanContext().traceId;
    const now = Date.now();
    for (const [id, kept] of this.traces) if (now - kept.since > FORGET_AFTER_MS) this.traces.delete(id);
    const kept = this.traces.get(traceId) ?? { spans: [], since: now };
    kept.spans.push(span);
    this.traces.set(traceId, kept);
    if (span.attributes[OPERATION_END_ATTRIBUTE] === undefined) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const done = this.traces.get(traceId);
      this.traces.delete(traceId);
      if (done) this.print(renderWaterfall(done.spans));
    }, SETTLE_MS);
    timer.unref();
    this.timers.add(timer);
  }

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.traces.clear();
  }
}

/** One trace's spans, parents before children, each line: offset and duration in ms, the name indented by depth. */
export function renderWaterfall(spans: readonly ReadableSpan[]): string {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const children = new Map<string | undefined, ReadableSpan[]>();
  for (const span of spans) {
    const parentId = span.parentSpanContext?.spanId;
    const key = parentId !== undefined && ids.has(parentId) ? parentId : undefined;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const start = Math.min(...spans.map((span) => hrTimeToMilliseconds(span.startTime)));
  const lines = [`trace ${spans[0]?.spanContext().traceId ?? ''} (${spans.length} spans)`];
  const walk = (parentId: string | undefined, depth: number) => {
    const level = [...(children.get(parentId) ?? [])].sort((a, b) => hrTimeToMilliseconds(a.startTime) - hrTimeToMilliseconds(b.startTime));
    for (const span of level) {
      const offset = hrTimeToMilliseconds(span.startTime) - start;
      const duration = hrTimeToMilliseconds(span.duration);
      lines.push(`  ${formatMs(offset).padStart(9)} ${formatMs(duration).padStart(9)}  ${'  '.repeat(depth)}${span.name}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}

function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}
