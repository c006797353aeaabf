/**
 * One `subscriptions/listen` stream over SSE, once its request is accepted: the
 * acknowledgement first, then a notification each time a watched item reads differently,
 * a keep-alive comment in between, and a graceful end (the listen request's own result)
 * before its time is up. It reads the watched items at its interval, or at once when the
 * wake-up signal fires; between invocations it keeps nothing. Its end bounds each wait and
 * each read, so it ends on time however slow its store is. Its lease goes back within
 * its own invocation: before the graceful end is sent, and before the invocation returns
 * however the stream ends (Lambda freezes work still pending once the handler has returned).
 */
import { SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import type { Logger } from '../../operations/ports.ts';
import type { StatusSignal } from '../../operations/status-signal.ts';
import { onceWithinInvocation } from './listen-deadline.ts';
import { ENDED, streamEnd } from './stream-end.ts';

/** An item as one read found it: the notification's params, what marks a change, and whether it can still change. */
export interface WatchedState {
  params: Record<string, unknown>;
  /** A new value is a change worth a notification. */
  change: string;
  terminal: boolean;
}

export interface ListenStreamPlan {
  /** The listen request's JSON-RPC id, stamped on everything the stream carries. */
  subscriptionId: string | number;
  /** The filter the server agreed to, for the acknowledgement. */
  acknowledged: Record<string, unknown>;
  /** The method of each item's notification. */
  method: string;
  /** The agreed items as first read, in order; terminal ones are reported once and not read again. */
  initial: ReadonlyArray<{ id: string; state: WatchedState }>;
  /** Reads an item again; `undefined` once it names nothing (expired): it is no longer watched. */
  read(id: string): Promise<WatchedState | undefined>;
  /** Epoch ms by which the stream has ended. */
  endAtMs: number;
  pollIntervalMs: number;
  keepAliveMs: number;
  /** Wakes the reads at once (the local stack); absent, the stream reads at its interval. */
  wake?: StatusSignal;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
  /** Called once, however the stream ends (gives the lease back). */
  onEnd(): Promise<void>;
  logger: Logger;
}

/** The SSE headers of a listen stream: no proxy may buffer it ("X-Accel-Buffering: no"). */
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** The stream's response; it runs until its items are all final, its time is up, or the client leaves. */
export function listenStream(plan: ListenStreamPlan): Response {
  const encoder = new TextEncoder();
  const stop = new AbortController();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const end = onceWithinInvocation(() => plan.onEnd());

  const write = (frame: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(frame));
    } catch {
      closed = true;
    }
  };
  const stamp = (params: Record<string, unknown>) => ({
    ...params,
    _meta: { ...(params._meta as Record<string, unknown> | undefined), [SUBSCRIPTION_ID_META_KEY]: plan.subscriptionId },
  });
  const send = (message: Record<string, unknown>) => write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`);
  const notify = (method: string, params: Record<string, unknown>) => send({ method, params: stamp(params) });

  let finished: Promise<void> | undefined;
  const finish = (graceful: boolean) =>
    (finished ??= (async () => {
      stop.abort();
      // The lease is free before the client can learn the stream is over: a re-listen at the cap is not refused.
      await end();
      // "it SHOULD respond to the original subscriptions/listen request with a completion result before closing the stream"
      if (graceful) send({ id: plan.subscriptionId, result: stamp({ resultType: 'complete' }) });
      closed = true;
      try {
        controller.close();
      } catch {
        // Already closed by the client.
      }
    })());

  const run = async () => {
    const keepAlive = setInterval(() => write(': keepalive\n\n'), plan.keepAliveMs);
    // Every wait and every read gives way to the stream's end: a slow read never carries it past its deadline.
    const over = streamEnd(plan.endAtMs, stop.signal);
    let woken = false;
    let wakeUp: (() => void) | undefined;
    const unsubscribe = plan.wake?.subscribe(() => {
      woken = true;
      wakeUp?.();
    });
    try {
      // "The server MUST send notifications/subscriptions/acknowledged as the first message"
      notify('notifications/subscriptions/acknowledged', { notifications: plan.acknowledged });
      const last = new Map<string, string>();
      for (const { id, state } of plan.initial) {
        notify(plan.method, state.params);
        if (!state.terminal) last.set(id, state.change);
      }
      cycles: while (last.size > 0 && !over.reached) {
        if (!woken) {
          let timer: ReturnType<typeof setTimeout> | undefined;
          await over.before(
            new Promise<void>((resolve) => {
              timer = setTimeout(resolve, plan.pollIntervalMs);
              wakeUp = resolve;
            }),
          );
          clearTimeout(timer);
          wakeUp = undefined;
        }
        woken = false;
        if (over.reached) break;
        for (const [id, seen] of [...last]) {
          const read = await over.before(plan.read(id));
          if (read === ENDED) break cycles;
          if ('error' in read) {
            // A failed read is tried again at the next interval; the client still has tasks/get.
            const { error } = read;
            plan.logger.warn('listen read failed', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
            continue;
          }
          const state = read.value;
          if (state === undefined) {
            last.delete(id);
            continue;
          }
          if (state.change !== seen) notify(plan.method, state.params);
          if (state.terminal) last.delete(id);
          else last.set(id, state.change);
        }
      }
      await finish(true);
    } catch (error) {
      plan.logger.error('listen stream failed', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      await finish(false);
    } finally {
      clearInterval(keepAlive);
      over.dispose();
      unsubscribe?.();
    }
  };

  const body = new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      void run();
    },
    // The reader that cancels waits for the lease to go back.
    cancel() {
      closed = true;
      stop.abort();
      return end();
    },
  });
  if (plan.signal) {
    if (plan.signal.aborted) void finish(false);
    else plan.signal.addEventListener('abort', () => void finish(false), { once: true });
  }
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}
