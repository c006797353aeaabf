/**
 * An in-process stand-in for the EventBridge rule that feeds status-change events
 * to the status-sync handler. Like EventBridge it delivers asynchronously and
 * at least once: a handler that throws is retried with exponential backoff, and an
 * event that still fails after the last attempt is logged and dropped.
 * Only an event's id is ever logged: its input and output carry tool arguments.
 */
import type { ExecutionStatusChangeEvent } from './sfn-facade-status-event.ts';

export interface LocalEventBusOptions {
  /** Delivery attempts per event, the first included. @default 4 */
  maxAttempts?: number;
  /** Backoff before the first retry; doubles on each further retry. @default 100 */
  baseDelayMs?: number;
  /** Upper bound for one backoff. @default 2000 */
  maxDelayMs?: number;
  /** @default console */
  logger?: Pick<Console, 'warn' | 'error'>;
}

export interface LocalEventBus<E> {
  /** Queues `event` for delivery and returns at once (never throws). */
  publish(event: E): void;
  /** Resolves once every event published so far is delivered or dropped, retries included. */
  drain(): Promise<void>;
  /** Stops accepting events, then drains. */
  close(): Promise<void>;
}

/** Creates a bus that delivers every published event (by default, Step Functions status changes) to `handler`. */
export function createLocalEventBus<E = ExecutionStatusChangeEvent>(handler: (event: E) => Promise<void>, opts: LocalEventBusOptions = {}): LocalEventBus<E> {
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 4);
  const baseDelayMs = opts.baseDelayMs ?? 100;
  const maxDelayMs = opts.maxDelayMs ?? 2000;
  const logger = opts.logger ?? console;
  const inFlight = new Set<Promise<void>>();
  let closed = false;
  let sequence = 0;

  async function deliver(event: E, id: string): Promise<void> {
    // Never inline: EventBridge delivery is decoupled from the publisher.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (let attempt = 1; ; attempt++) {
      try {
        await handler(event);
        return;
      } catch (error) {
        if (attempt >= maxAttempts) {
          logger.error(`event bus: dropped event ${id} after ${attempt} attempts: ${describe(error)}`);
          return;
        }
        const delay = backoff(attempt, baseDelayMs, maxDelayMs);
        logger.warn(`event bus: delivery of event ${id} failed (attempt ${attempt}/${maxAttempts}), retrying in ${delay} ms: ${describe(error)}`);
        await new Promise<void>((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async function drain(): Promise<void> {
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  }

  return {
    publish(event) {
      const id = eventId(event) ?? `local-${++sequence}`;
      if (closed) {
        logger.warn(`event bus: closed, dropped event ${id}`);
        return;
      }
      const delivery = deliver(event, id).finally(() => inFlight.delete(delivery));
      inFlight.add(delivery);
    },
    drain,
    async close() {
      closed = true;
      await drain();
    },
  };
}

/** Exponential backoff with jitter on the upper half, as AWS retries do. */
function backoff(attempt: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

function eventId(event: unknown): string | undefined {
  if (typeof event === 'object' && event !== null && 'id' in event && typeof event.id === 'string') return event.id;
  return undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
