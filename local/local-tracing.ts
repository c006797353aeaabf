/**
 * Tracing for `npm start`: OpenTelemetry's standard environment turns exporting on for the
 * server and every function it runs in its process, and `--trace` adds the console waterfall.
 */
import type { TracingSdk } from '../lambdas/observability/tracing-sdk.ts';
import { startTracing } from '../lambdas/observability/tracing-setup.ts';

/** The local stack's service name when `OTEL_SERVICE_NAME` gives none. */
export const LOCAL_SERVICE_NAME = 'async-mcp-local';

/** Starts tracing as the environment and `--trace` ask; `undefined` when neither does (the SDK is not loaded). */
export async function startLocalTracing(waterfall: boolean, print?: (text: string) => void): Promise<TracingSdk | undefined> {
  if (!waterfall) return startTracing(LOCAL_SERVICE_NAME);
  const { TraceWaterfall } = await import('./trace-waterfall.ts');
  return startTracing(LOCAL_SERVICE_NAME, [new TraceWaterfall(print)]);
}
