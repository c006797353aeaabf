/**
 * Whether OpenTelemetry's standard environment asks for traces, and the SDK started only
 * then: a function or process without it never loads the SDK (tracing-sdk.ts).
 */
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { TracingSdk } from './tracing-sdk.ts';

/** Whether the environment turns exporting on: an OTLP endpoint, or `OTEL_TRACES_EXPORTER=otlp`, and the SDK not disabled. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',').map((name) => name.trim().toLowerCase());
  if (exporters?.includes('none')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || exporters?.includes('otlp'));
}

/**
 * Starts the SDK when the environment asks for it or `processors` are given (they see every
 * span, with or without an exporter); otherwise resolves to `undefined` and loads nothing.
 */
export async function startTracing(
  serviceName: string,
  processors: SpanProcessor[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<TracingSdk | undefined> {
  const exporting = tracingRequested(env);
  if (!exporting && processors.length === 0) return undefined;
  const { startTracingSdk } = await loadTracingSdk();
  return startTracingSdk({ serviceName, processors, export: exporting });
}

/** The bare name a Lambda bundle imports the SDK by: a lazy module shipped beside the bundle (cdk/lambda-bundling.ts), never in it. */
export const TRACING_SDK_PACKAGE = 'async-mcp-tracing-sdk';

/** The variable the Lambda bundles define as "1" (LAMBDA_BUNDLING.define), so esbuild keeps only the shipped SDK's import. */
export const SHIPPED_TRACING_SDK_FLAG = 'ASYNC_MCP_SHIPPED_TRACING_SDK';

function loadTracingSdk(): Promise<typeof import('./tracing-sdk.ts')> {
  // Spelled out, not through SHIPPED_TRACING_SDK_FLAG: esbuild's define replaces this very expression.
  return process.env.ASYNC_MCP_SHIPPED_TRACING_SDK === '1' ? import(TRACING_SDK_PACKAGE) : import('./tracing-sdk.ts');
}
