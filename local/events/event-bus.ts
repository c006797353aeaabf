/**
 * An in-process stand-in for the EventBridge rule that feeds status-change events
 * to the status-sync handler. Like the rule it forwards only the events that match its
 * pattern, and like EventBridge it delivers asynchronously and at least once: a handler
 * that throws is retried with exponential backoff, and an event that still fails after
 * the last attempt is logged and dropped.
 * Only an event's id is ever logged: its input and output carry tool arguments.
 */
import { isObject } from '../../lambdas/shared/json-values.ts';
import { describeError } from '../describe-error.ts';
import { checkEventPattern, matchesEventPattern, type EventPattern } from './event-pattern.ts';
import type { ExecutionStatusChangeEvent } from '../stepfunctions/sfn-facade-status-event.ts';

export interface LocalEventBusOptions {
  /**
   * The rule's EventBridge pattern (exact values only, checked when the bus is created);
   * events that do not match it are not delivered. @default every event
   */
  pattern?: object;
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

/** Creates a bus that delivers each published event that matches its pattern (by default, Step Functions status changes) to `handler`. */
export function createLocalEventBus<E = ExecutionStatusChangeEvent>(handler: (event: E) => Promise<void>, opts: LocalEventBusOptions = {}): LocalEventBus<E> {
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 4);
  const baseDelayMs = opts.baseDelayMs ?? 100;
  const maxDelayMs = opts.maxDelayMs ?? 2000;
  const logger = opts.logger ?? console;
  const pattern = checkedPattern(opts.pattern);
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
          logger.error(`event bus: dropped event ${id} after ${attempt} attempts: ${describeError(error)}`);
          return;
        }
        const delay = backoff(attempt, baseDelayMs, maxDelayMs);
        logger.warn(`event bus: delivery of event ${id} failed (attempt ${attempt}/${maxAttempts}), retrying in ${delay} ms: ${describeError(error)}`);
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
      // Not this rule's event: AWS would not invoke the target either.
      if (pattern !== undefined && !matchesEventPattern(pattern, event)) return;
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

function checkedPattern(pattern: object | undefined): EventPattern | undefined {
  if (pattern !== undefined) checkEventPattern(pattern);
  return pattern;
}

/** Exponential backoff with jitter on the upper half, as AWS retries do. */
function backoff(attempt: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

function eventId(event: unknown): string | undefined {
  return isObject(event) && typeof event.id === 'string' ? event.id : undefined;
}
