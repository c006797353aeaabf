/**
 * Work that must finish before the HTTP response is sent. The SDK acknowledges a
 * notification (202) without waiting for its handler, but a Lambda is frozen once it
 * has answered, so a cancel started by `notifications/cancelled` would never run.
 * Handlers register such work here; the HTTP handler awaits it before answering.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<Promise<unknown>[]>();

/** Runs `serve` and then waits for the work registered while it ran. */
export async function withPendingWork<T>(serve: () => Promise<T>): Promise<T> {
  const pending: Promise<unknown>[] = [];
  const result = await scope.run(pending, serve);
  while (pending.length) await Promise.allSettled(pending.splice(0));
  return result;
}

/** Registers `work` with the current request, or lets it run free outside one. */
export function finishBeforeResponse(work: Promise<unknown>): void {
  scope.getStore()?.push(work);
}
