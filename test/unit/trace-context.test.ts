import { describe, expect, it } from 'vitest';
import { fromOperationItem, toOperationItem } from '../../lambdas/aws/operation-item.ts';
import { traceCarrierFromHeaders, traceCarrierFromMeta, traceIdOf } from '../../lambdas/observability/trace-context.ts';
import { currentCarrier, tracingOn, withSpan } from '../../lambdas/observability/tracing.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('trace context from a request', () => {
  it('reads traceparent and tracestate from params._meta (SEP-414)', () => {
    const carrier = traceCarrierFromMeta({ _meta: { traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7' } });
    expect(carrier).toEqual({ traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7' });
    expect(traceIdOf(carrier!)).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it('reads the HTTP traceparent header', () => {
    expect(traceCarrierFromHeaders(new Headers({ traceparent: TRACEPARENT }))).toEqual({ traceparent: TRACEPARENT });
  });

  it.each([
    ['an all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['an all-zero span id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['upper-case hex', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'],
    ['a number', 42],
  ])('ignores a traceparent with %s', (_, traceparent) => {
    expect(traceCarrierFromMeta({ _meta: { traceparent } })).toBeUndefined();
  });
});

describe('spans with tracing off', () => {
  it('runs the function with a span that records nothing, and gives no carrier', async () => {
    expect(tracingOn()).toBe(false);
    const value = await withSpan('tools/call x', { parent: { traceparent: TRACEPARENT } }, async (span) => {
      expect(span.isRecording()).toBe(false);
      return 7;
    });
    expect(value).toBe(7);
    expect(currentCarrier()).toBeUndefined();
  });
});

describe('the operation item', () => {
  it('keeps the start span context the record carries', () => {
    const record: OperationRecord = {
      ownerId: 'owner',
      token: 'tok',
      tool: 'analyze_dataset',
      argumentsHash: 'h',
      dialect: 'tasks-2026-07-28',
      status: 'working',
      executionName: 'e',
      createdAt: 1,
      updatedAt: 1,
      keepAliveSeconds: 60,
      pollIntervalSeconds: 1,
      trace: { traceparent: TRACEPARENT, tracestate: 'a=b' },
    };
    expect(fromOperationItem(toOperationItem(record)).trace).toEqual(record.trace);
  });
});
