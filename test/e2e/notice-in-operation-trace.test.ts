/**
 * The notice in one operation's trace, end to end (issue 51): the local stack with
 * OpenTelemetry exporting OTLP/JSON to a receiver on 127.0.0.1, a principal signed in by the
 * development authorization server, a webhook subscribed to `operation.finished`, and one
 * `analyze_dataset` task in the Tasks extension whose `tools/call` carries a host's
 * `traceparent` in `_meta` (bench/operation-trace.ts runs it, as it does for the docs' picture).
 * The end's event is a span under status sync's end, the webhook POST a span under the event,
 * and the receiver gets that POST's context as its `traceparent` header and the event's in the
 * body's `_meta`.
 */
import { describe, expect, it } from 'vitest';
import { type ExportedSpan, traceOneOperation } from '../../bench/operation-trace.ts';

const CLIENT = 3;
const PRODUCER = 4;

function only(spans: readonly ExportedSpan[], name: string): ExportedSpan {
  const named = spans.filter((span) => span.name === name);
  expect(named.map((span) => span.name)).toEqual([name]);
  return named[0] as ExportedSpan;
}

describe('the notice of a traced operation', () => {
  it("the end's event, its EventBridge event and its webhook POST are in the caller's trace, and the POST sends its traceparent header", {
    timeout: 120_000,
  }, async () => {
    const { traceId, operation, notices } = await traceOneOperation();
    const request = only(operation, 'tools/call analyze_dataset');
    const ends = operation.filter((span) => span.name === 'status sync');
    expect(ends.length).toBeGreaterThanOrEqual(1);
    for (const end of ends) expect(end.parentSpanId).toBe(request.spanId);

    const event = only(operation, 'event operation.finished');
    expect(event.kind).toBe(PRODUCER);
    expect(ends.map((span) => span.spanId)).toContain(event.parentSpanId);
    // The EventBridge event of each status write, under its status sync.
    const published = operation.filter((span) => span.name === 'event Operation Status Changed');
    expect(published.length).toBe(ends.length);
    for (const span of published) expect(ends.map((end) => end.spanId)).toContain(span.parentSpanId);

    const post = only(operation, 'webhook operation.finished');
    expect(post.kind).toBe(CLIENT);
    expect(post.parentSpanId).toBe(event.spanId);
    const delivered = notices.filter((notice) => notice.traceparent !== undefined);
    expect(delivered.map((notice) => notice.traceparent)).toEqual([`00-${traceId}-${post.spanId}-01`]);
    expect(delivered[0]?.meta).toMatchObject({ traceparent: `00-${traceId}-${event.spanId}-01` });
  });
});
