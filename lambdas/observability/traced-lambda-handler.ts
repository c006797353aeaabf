/**
 * OpenTelemetry's SDK around a deployed function's handler: started at init when the
 * environment asks for it (the construct's `tracing` setting, tracing-setup.ts), and each
 * invocation's spans flushed before it returns, as Lambda may freeze the container right
 * after. Without that environment, or outside a Lambda runtime (the local stack starts its
 * own SDK, local/local-tracing.ts), the handler is returned as it is and nothing is loaded.
 */
import { consoleLogger } from '../logging/logger.ts';
import { startTracing, tracingRequested } from './tracing-setup.ts';

/** Runs one invocation, its spans flushed before it settles. */
export type InvocationTracing = <T>(invocation: () => Promise<T>) => Promise<T>;

/** Whether the tracing environment is set and this process is a Lambda runtime (or its local stand-in). */
export function lambdaTracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.AWS_LAMBDA_FUNCTION_NAME !== undefined && tracingRequested(env);
}

/**
 * Starts the SDK now (a function's init) if the environment asks, and gives what wraps each
 * invocation; a plain call of the invocation otherwise.
 */
export function lambdaInvocationTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): InvocationTracing {
  if (!lambdaTracingRequested(env)) return (invocation) => invocation();
  const started = startTracing(serviceName, [], env).catch((error: unknown) => {
    // Tracing is an aid: a function whose SDK cannot load still serves, untraced.
    consoleLogger.warn('tracing is off: the OpenTelemetry SDK did not start', { error: error instanceof Error ? error.name : typeof error });
    return undefined;
  });
  return async (invocation) => {
    const sdk = await started;
    try {
      return await invocation();
    } finally {
      // A failed export is the exporter's to log: it never fails the invocation.
      await sdk?.forceFlush().catch(() => undefined);
    }
  };
}

/** `handler` with the SDK started at init and each invocation's spans flushed; `handler` itself when tracing is not asked for. */
export function tracedLambdaHandler<A extends unknown[], R>(serviceName: string, handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  if (!lambdaTracingRequested()) return handler;
  const traced = lambdaInvocationTracing(serviceName);
  return (...args) => traced(() => handler(...args));
}
