/**
 * Small pieces the JSONata-capable interpreter shares: its event log as an async iterable,
 * abortable sleeps, and how a thrown value becomes a States error `{ Error, Cause }`.
 */

/** The run was stopped (StopExecution, the machine's TimeoutSeconds, or shutdown). */
export class RunAborted extends Error {
  override name = 'RunAborted';
}

/** A States error as Catch sees it (the error output). */
export interface Failure {
  Error: string;
  Cause: string;
}

/** Error = the thrown error's name, Cause = its message (how task failures are raised locally). */
export function failureOf(error: unknown): Failure {
  if (error instanceof Error) return { Error: error.name, Cause: error.message };
  return { Error: 'States.Runtime', Cause: String(error) };
}

/** States.Runtime and States.DataLimitExceeded end the execution: no Retry or Catch sees them. */
export function isUncatchable(error: string): boolean {
  return error === 'States.Runtime' || error === 'States.DataLimitExceeded';
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    // The longest a Node timer can wait.
    const timer = setTimeout(done, Math.min(2_147_483_647, Math.max(0, Math.round(ms))));
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A push-driven async iterable that ends when closed. */
export class EventChannel<E> {
  private readonly queue: E[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  push(event: E): void {
    if (this.closed) return;
    this.queue.push(event);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *iterate(): AsyncGenerator<E> {
    for (;;) {
      while (this.queue.length > 0) yield this.queue.shift()!;
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
