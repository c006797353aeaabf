/**
 * When the current invocation must have finished (epoch ms): in Lambda, the function's
 * timeout as the invocation's context reports it; locally, none. A listen stream ends
 * cleanly before it, so the client re-listens instead of seeing the stream cut.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const deadline = new AsyncLocalStorage<number>();

/** Runs `work` (and everything it starts) with `deadlineMs` as the invocation's deadline. */
export function withInvocationDeadline<T>(deadlineMs: number | undefined, work: () => Promise<T>): Promise<T> {
  return deadlineMs === undefined ? work() : deadline.run(deadlineMs, work);
}

/** The current invocation's deadline, if it has one. */
export function invocationDeadline(): number | undefined {
  return deadline.getStore();
}
