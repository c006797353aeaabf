/**
 * The end of a long-lived response: its end time, or its stop (the client went away),
 * whichever comes first. A stream awaits each wait and each read through it, so nothing
 * it waits on (a slow read, SDK retries) carries it past its end and its invocation's
 * deadline; work left behind settles on its own, unwatched.
 */

/** What `StreamEnd.before` gives when the end came first. */
export const ENDED = Symbol('ended');

/** How awaited work settled before the end. */
export type Settled<T> = { value: T } | { error: unknown };

export interface StreamEnd {
  /** Whether the end has come. */
  readonly reached: boolean;
  /** How `work` settled, or `ENDED` if the end came first. */
  before<T>(work: Promise<T>): Promise<Settled<T> | typeof ENDED>;
  /** Clears the end timer; call once the stream is over. */
  dispose(): void;
}

/** The end of a stream that must be over by `endAtMs` (epoch ms), or once `signal` aborts. */
export function streamEnd(endAtMs: number, signal: AbortSignal): StreamEnd {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const ended = new Promise<typeof ENDED>((resolve) => {
    const done = () => resolve(ENDED);
    onAbort = done;
    timer = setTimeout(done, Math.max(0, endAtMs - Date.now()));
    signal.addEventListener('abort', done, { once: true });
  });
  return {
    get reached() {
      return signal.aborted || Date.now() >= endAtMs;
    },
    before<T>(work: Promise<T>) {
      const settled = work.then(
        (value): Settled<T> => ({ value }),
        (error: unknown): Settled<T> => ({ error }),
      );
      return Promise.race([settled, ended]);
    },
    dispose() {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    },
  };
}
