/**
 * The current invocation, as a long-lived response sees it:
 * - when it must have finished (epoch ms): in Lambda, the function's timeout as the
 *   invocation's context reports it; locally, none. A listen stream ends cleanly before
 *   it, so the client re-listens instead of seeing the stream cut;
 * - the work it must finish before it returns (a stream's lease going back): Lambda
 *   freezes whatever is still pending once the handler has returned.
 */
import { contextSlot } from '../../shared/context-slot.ts';

interface Invocation {
  deadlineMs?: number;
  pending: Set<Promise<unknown>>;
}

const invocation = contextSlot<Invocation>('invocation');

/**
 * Runs `work` (and everything it starts) with `deadlineMs` as the invocation's deadline,
 * then waits for the work registered with `finishWithinInvocation` while it ran.
 */
export async function withInvocationDeadline<T>(deadlineMs: number | undefined, work: () => Promise<T>): Promise<T> {
  const state: Invocation = { pending: new Set(), ...(deadlineMs === undefined ? {} : { deadlineMs }) };
  try {
    return await invocation.run(state, work);
  } finally {
    while (state.pending.size > 0) await Promise.allSettled([...state.pending]);
  }
}

/** The current invocation's deadline, if it has one. */
export function invocationDeadline(): number | undefined {
  return invocation.getStore()?.deadlineMs;
}

/**
 * `work` run at most once, its failure swallowed, and registered with the invocation it starts
 * in: a stream's lease goes back before the handler returns, since Lambda freezes what is pending.
 */
export function onceWithinInvocation(work: () => Promise<unknown>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    if (!done) {
      done = work().then(
        () => undefined,
        () => undefined,
      );
      finishWithinInvocation(done);
    }
    return done;
  };
}

/** Registers `work` with the current invocation, which returns only once it has settled; outside one it runs free. */
export function finishWithinInvocation(work: Promise<unknown>): void {
  const state = invocation.getStore();
  if (!state) return;
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  state.pending.add(settled);
  void settled.then(() => state.pending.delete(settled));
}
