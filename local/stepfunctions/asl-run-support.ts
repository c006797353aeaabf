/**
 * Small pieces the JSONata-capable interpreter shares: its event log,
 * abortable sleeps on the shared timer queue, and how a thrown value becomes a States error `{ Error, Cause }`.
 */
import { timers } from './asl-timer-queue.ts';

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

/** What a run's states watch to stop: an AbortSignal fits, and so does a `RunStop`. */
export interface StopSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A run's stop switch and its signal in one small object: what an AbortController does,
 * without an EventTarget and its maps for each of thousands of waiting runs.
 * Listeners are called once, in order, when it is first aborted.
 */
export class RunStop implements StopSignal {
  aborted = false;
  private listeners: Array<() => void> | undefined;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) listener();
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    this.listeners ??= [];
    this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.listeners?.splice(index, 1);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: StopSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      timers.cancel(entry);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const entry = timers.schedule(Math.round(ms), done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * A run's event log, handed to its listener as each event happens and nothing after close.
 * Push, not an async iterable: a waiting run then holds no reader suspended on its log.
 */
export class EventSink<E> {
  private closed = false;

  constructor(private readonly listener: (event: E) => void) {}

  push(event: E): void {
    if (!this.closed) this.listener(event);
  }

  close(): void {
    this.closed = true;
  }
}
