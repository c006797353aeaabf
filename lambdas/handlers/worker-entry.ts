/**
 * The entry every deployed worker is bundled from: the worker's own module (a built-in one, or
 * a user's from the workers directory), imported by the name its bundle aliases to that module
 * (cdk/worker-bundling.ts), its handler called unchanged. With tracing on in AWS, OpenTelemetry's
 * SDK starts at init and each invocation is a worker span, the child of the operation's trace
 * its event carries, flushed before the invocation returns. The local stack does not use this
 * entry: it calls the worker modules in-process, inside the execution's span.
 */
import { handler as workerHandler } from 'async-mcp-worker-module';
import { tracedWorker } from '../observability/traced-invocation.ts';
import { tracedLambdaHandler } from '../observability/traced-lambda-handler.ts';

// Replaced by the bundle (esbuild's define, cdk/worker-bundling.ts) with the worker's name.
const workerName = process.env.ASYNC_MCP_WORKER_NAME ?? 'worker';

/** Lambda entry point: the worker's handler, in a worker span with tracing on. */
export const handler = tracedLambdaHandler(
  'async-mcp-worker',
  // Awaited here, so a worker that answers synchronously is served as one that answers a promise.
  tracedWorker(workerName, async (event: unknown, ...rest: unknown[]) => workerHandler(event, ...rest)),
);
