/**
 * The configuration every AWS SDK client is built with, and the bounds of the deployed ones.
 * `cacheMiddleware` resolves each command's middleware stack once per client instead of on
 * every call: a status poll is one GetItem, and resolving the stack was a good part of its
 * CPU time. Middleware must then be added before a client's first call (the call counter
 * and the local size limits are).
 */
export const AWS_CLIENT_CONFIG = { cacheMiddleware: true } as const;

/** Connecting to a regional AWS endpoint takes milliseconds: a second is a network fault, and is retried. */
export const CONNECT_TIMEOUT_MS = 1_000;

/** One attempt of an ordinary call (DynamoDB and Step Functions answer in milliseconds). */
export const ATTEMPT_TIMEOUT_MS = 3_000;

/** The SDK's default, stated: throttling and dropped connections are retried, a few times. */
export const MAX_ATTEMPTS = 3;

/**
 * A deployed client whose every attempt is bounded: a call that hangs fails with a
 * TimeoutError and is retried, instead of running until the function's timeout ends the
 * invocation (a listen stream's graceful end and its lease with it). Without
 * `throwOnRequestTimeout` the SDK only logs a late answer, and keeps waiting.
 */
export function boundedClientConfig(attemptTimeoutMs: number = ATTEMPT_TIMEOUT_MS) {
  return {
    ...AWS_CLIENT_CONFIG,
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: attemptTimeoutMs, throwOnRequestTimeout: true },
  };
}

/**
 * The deployed functions' DynamoDB clients, and Step Functions clients that never wait on a
 * run: all attempts of one call and their backoff fit in the seconds a request keeps past
 * its blocking bound (REQUEST_MARGIN_SECONDS).
 */
export const DEPLOYED_CLIENT_CONFIG = boundedClientConfig();

/** How long past the blocking bound a StartSyncExecution attempt may last: its own signal aborts it at the bound. */
const SYNC_RUN_ABORT_MS = 5_000;

/**
 * The MCP function's Step Functions client: StartSyncExecution waits on its run for up to
 * `maxBlockingSeconds`, so one attempt may last that long, and a little more; it still
 * ends before the function's timeout (the bound plus REQUEST_MARGIN_SECONDS).
 */
export function runWaitingClientConfig(maxBlockingSeconds: number) {
  return boundedClientConfig(maxBlockingSeconds * 1000 + SYNC_RUN_ABORT_MS);
}
