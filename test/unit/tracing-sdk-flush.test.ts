/**
 * The SDK's bounded flush, which a deployed function runs at the end of each invocation: it
 * never throws, names a failed export, and gives up waiting on a collector that hangs at the
 * bound instead of the exporter's own timeout.
 */
import { ExportResultCode } from '@opentelemetry/core';
import { BatchSpanProcessor, InMemorySpanExporter, type SpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { startTracingSdk, type TracingSdk } from '../../lambdas/observability/tracing-sdk.ts';
import { withSpan } from '../../lambdas/observability/tracing.ts';

let sdk: TracingSdk | undefined;
afterEach(async () => {
  await sdk?.shutdown();
  sdk = undefined;
});

/** The SDK with one batch processor over `exporter`, and one span waiting in its batch. */
async function oneSpanBatchedFor(exporter: SpanExporter): Promise<TracingSdk> {
  // Its own export timeout short, so the SDK's shutdown after the test does not wait on a hung export.
  sdk = startTracingSdk({ serviceName: 'flush-test', processors: [new BatchSpanProcessor({ exporter, exportTimeoutMillis: 1_000 })], export: false });
  await withSpan('status sync', {}, async () => undefined);
  return sdk;
}

describe("the SDK's bounded flush", () => {
  it('exports what is batched and answers nothing wrong', async () => {
    const exporter = new InMemorySpanExporter();
    const started = await oneSpanBatchedFor(exporter);
    await expect(started.flushWithin(5_000)).resolves.toBeUndefined();
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['status sync']);
  });

  it('names a failed export instead of throwing', async () => {
    const failing: SpanExporter = {
      export: (_spans, done) => done({ code: ExportResultCode.FAILED, error: new RangeError('refused') }),
      shutdown: async () => undefined,
    };
    const started = await oneSpanBatchedFor(failing);
    await expect(started.flushWithin(5_000)).resolves.toBe('RangeError');
  });

  it('stops waiting on a collector that never answers at the bound', async () => {
    const hung: SpanExporter = { export: () => undefined, shutdown: async () => undefined };
    const started = await oneSpanBatchedFor(hung);
    // The batch processor's own timeout (1 s here) would end the wait with an Error of its own.
    await expect(started.flushWithin(50)).resolves.toBe('TimeoutError');
  });
});
