/**
 * The SDK around a deployed handler: without the tracing environment in a Lambda runtime the
 * handler is returned as it is and the SDK is never loaded; with it, the SDK starts once at
 * init and every invocation is flushed within a bound, and a flush that fails or times out
 * fails no invocation and is said once, not on every invocation.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  INVOCATION_FLUSH_BOUND_MS,
  lambdaInvocationTracing,
  type LambdaTracingOptions,
  tracedLambdaHandler,
} from '../../lambdas/observability/traced-lambda-handler.ts';
import type { TracingSdk } from '../../lambdas/observability/tracing-sdk.ts';

const TRACING_ENV = { AWS_LAMBDA_FUNCTION_NAME: 'fn', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };

/** An SDK whose flushes answer what the test queues: `undefined` (exported) or a failure's name. */
function fakeSdk(...answers: (string | undefined)[]) {
  const flushWithin = vi.fn(async (_boundMs: number) => answers.shift());
  const sdk: TracingSdk = { forceFlush: async () => undefined, flushWithin, shutdown: async () => undefined };
  return { sdk, flushWithin };
}

function options(env: NodeJS.ProcessEnv, sdk?: TracingSdk): Required<LambdaTracingOptions> & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    env,
    start: vi.fn(async () => sdk),
    logger: { warn: (message) => warnings.push(message) },
    warnings,
  };
}

describe('without the tracing environment in a Lambda runtime', () => {
  it.each([
    ['no tracing environment', { AWS_LAMBDA_FUNCTION_NAME: 'fn' }],
    ['not in a Lambda runtime', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }],
    ['the SDK disabled', { ...TRACING_ENV, OTEL_SDK_DISABLED: 'true' }],
  ])('%s: the handler is returned as it is, and the SDK is never started (nor loaded)', async (_case, env) => {
    const handler = async (event: string) => `handled ${event}`;
    const given = options(env);
    expect(tracedLambdaHandler('fn', handler, given)).toBe(handler);
    const traced = lambdaInvocationTracing('fn', given);
    await expect(traced(() => handler('x'))).resolves.toBe('handled x');
    expect(given.start).not.toHaveBeenCalled();
  });
});

describe('with the tracing environment in a Lambda runtime', () => {
  it('starts the SDK once, at init, and flushes within the bound after every invocation, a failed one too', async () => {
    const { sdk, flushWithin } = fakeSdk();
    const given = options(TRACING_ENV, sdk);
    const handler = tracedLambdaHandler(
      'fn',
      async (event: string) => {
        if (event === 'bad') throw new TypeError('bad event');
        return event;
      },
      given,
    );
    expect(given.start).toHaveBeenCalledWith('fn');
    await expect(handler('good')).resolves.toBe('good');
    await expect(handler('bad')).rejects.toThrow(TypeError);
    expect(given.start).toHaveBeenCalledTimes(1);
    expect(flushWithin.mock.calls).toEqual([[INVOCATION_FLUSH_BOUND_MS], [INVOCATION_FLUSH_BOUND_MS]]);
  });

  it('fails no invocation when the flush fails or times out, and says so once until an export succeeds again', async () => {
    const { sdk } = fakeSdk('OTLPExporterError', 'TimeoutError', undefined, 'TimeoutError');
    const given = options(TRACING_ENV, sdk);
    const handler = tracedLambdaHandler('fn', async () => 'ok', given);
    for (let invocation = 0; invocation < 4; invocation++) await expect(handler()).resolves.toBe('ok');
    expect(given.warnings).toEqual(['spans not exported: the collector failed or is slow', 'spans not exported: the collector failed or is slow']);
  });

  it('serves untraced when the SDK does not start, saying so once', async () => {
    const given = options(TRACING_ENV);
    given.start = vi.fn(async () => {
      throw new Error('Cannot find package async-mcp-tracing-sdk');
    });
    const handler = tracedLambdaHandler('fn', async () => 'ok', given);
    await expect(handler()).resolves.toBe('ok');
    await expect(handler()).resolves.toBe('ok');
    expect(given.warnings).toEqual(['tracing is off: the OpenTelemetry SDK did not start']);
  });
});
