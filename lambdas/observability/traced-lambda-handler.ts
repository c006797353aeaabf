/**
 * OpenTelemetry's SDK around a deployed function's handler: started at init when the
 * environment asks for it (the construct's `tracing` setting, tracing-setup.ts), and each
 * invocation's spans flushed before it returns, as Lambda may freeze the container right
 * after. Without that environment, or outside a Lambda runtime (the local stack starts its
 * own SDK, local/local-tracing.ts), the handler is returned as it is and nothing is loaded.
 */
import type { Logger } from '../operations/ports.ts';
import type { TracingSdk } from './tracing-sdk.ts';
import { startTracing, tracingRequested } from './tracing-setup.ts';

/** Runs one invocation, its spans flushed before it settles. */
export type InvocationTracing = <T>(invocation: () => Promise<T>) => Promise<T>;

/**
 * How long an invocation waits past its own end for its spans to be exported: a collector
 * that hangs costs each invocation this much, never the exporter's own timeout (10 s by
 * default), and it fits in the 5 s a listen stream leaves before the function's timeout. An
 * export still under way then goes on when the container is next thawed.
 */
export const INVOCATION_FLUSH_BOUND_MS = 2_000;

/** What the wrapper needs besides the environment; tests replace the SDK's start. */
export interface LambdaTracingOptions {
  env?: NodeJS.ProcessEnv;
  start?: (serviceName: string) => Promise<TracingSdk | undefined>;
  logger?: Pick<Logger, 'warn'>;
}

/**
 * A warning as one JSON line, the shape of the functions' other log lines: the structured
 * logger would add tens of KB to a worker's bundle, whose own code may be a few hundred bytes.
 */
const warnAsJsonLine: Pick<Logger, 'warn'> = {
  warn: (message, fields) => console.warn(JSON.stringify({ level: 'WARN', message, timestamp: new Date().toISOString(), ...fields })),
};

/** Whether the tracing environment is set and this process is a Lambda runtime (or its local stand-in). */
export function lambdaTracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.AWS_LAMBDA_FUNCTION_NAME !== undefined && tracingRequested(env);
}

/**
 * Starts the SDK now (a function's init) if the environment asks, and gives what wraps each
 * invocation; a plain call of the invocation otherwise. Spans that could not be exported fail
 * no invocation: that is said once when exports start failing and again after one succeeds,
 * not on every invocation while a collector is down.
 */
export function lambdaInvocationTracing(serviceName: string, options: LambdaTracingOptions = {}): InvocationTracing {
  const { env = process.env, logger = warnAsJsonLine, start = (name: string) => startTracing(name, [], env) } = options;
  if (!lambdaTracingRequested(env)) return (invocation) => invocation();
  const started = start(serviceName).catch((error: unknown) => {
    // Tracing is an aid: a function whose SDK cannot load still serves, untraced.
    logger.warn('tracing is off: the OpenTelemetry SDK did not start', { error: error instanceof Error ? error.name : typeof error });
    return undefined;
  });
  let failing = false;
  return async (invocation) => {
    const sdk = await started;
    try {
      return await invocation();
    } finally {
      const failure = await sdk?.flushWithin(INVOCATION_FLUSH_BOUND_MS);
      if (failure && !failing) logger.warn('spans not exported: the collector failed or is slow', { error: failure });
      failing = failure !== undefined;
    }
  };
}

/** `handler` with the SDK started at init and each invocation's spans flushed; `handler` itself when tracing is not asked for. */
export function tracedLambdaHandler<A extends unknown[], R>(
  serviceName: string,
  handler: (...args: A) => Promise<R>,
  options: LambdaTracingOptions = {},
): (...args: A) => Promise<R> {
  if (!lambdaTracingRequested(options.env)) return handler;
  const traced = lambdaInvocationTracing(serviceName, options);
  return (...args) => traced(() => handler(...args));
}
