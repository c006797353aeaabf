/**
 * An EventBridge rule from the template, locally: each published event that matches the rule's
 * pattern goes to each target function asynchronously, retried with exponential backoff and
 * jitter until the target's RetryPolicy runs out (MaximumRetryAttempts, or MaximumEventAgeInSeconds
 * since the event was published), then sent to the target's dead-letter queue with the
 * attributes EventBridge gives it. Backoff and age are measured in `waitTimeScale` time, so
 * tests can run the whole policy in moments. Only event ids are logged: events carry tool data.
 */
import type { DeployedStack } from '../assembly/deployed-stack.ts';
import { checkEventPattern, matchesEventPattern } from '../events/event-pattern.ts';
import type { DeadLetter, DeadLetterQueue } from './dead-letter-queue.ts';

type Rule = DeployedStack['rules'][number];
type Target = Rule['targets'][number];

/** EventBridge's defaults when a target sets no RetryPolicy. */
const DEFAULT_RETRY_ATTEMPTS = 185;
const DEFAULT_EVENT_AGE_SECONDS = 86_400;
const BASE_DELAY_MS = 1000;
const MAX_DELAY_MS = 60_000;

export interface RuleDeliveryOptions {
  rule: Rule;
  /** Invokes the target function with the event (what the Lambda integration does); throws when it fails. */
  invoke: (functionArn: string, event: unknown) => Promise<unknown>;
  /** The dead-letter queues, by ARN. */
  deadLetterQueues: Map<string, DeadLetterQueue>;
  /** Multiplies backoff delays and event age. @default 1 */
  waitTimeScale?: number;
  /** May EventBridge invoke this target (the function's resource policy)? Denied: dead-lettered at once with NO_PERMISSIONS. */
  mayInvoke?: (functionArn: string) => Promise<boolean>;
  /** @default console */
  logger?: Pick<Console, 'warn' | 'error'>;
}

export interface RuleDelivery {
  /** Delivers `event` if it matches the rule's pattern; returns at once. */
  publish(event: unknown): void;
  /** Sends a dead letter through its target again, once; resolves whether it succeeded. */
  replay(letter: DeadLetter): Promise<boolean>;
  /** Resolves when every event published so far is delivered or dead-lettered. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export function createRuleDelivery(options: RuleDeliveryOptions): RuleDelivery {
  const { rule } = options;
  checkEventPattern(rule.eventPattern);
  const pattern = rule.eventPattern;
  const scale = options.waitTimeScale ?? 1;
  const logger = options.logger ?? console;
  const inFlight = new Set<Promise<void>>();
  const sleeping = new Map<NodeJS.Timeout, () => void>();
  let closed = false;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        sleeping.delete(timer);
        resolve();
      }, ms * scale);
      sleeping.set(timer, resolve);
    });

  async function deliver(event: unknown, target: Target, publishedAt: number): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const id = eventId(event);
    const retries = target.retryPolicy?.maximumRetryAttempts ?? DEFAULT_RETRY_ATTEMPTS;
    const maxAgeMs = (target.retryPolicy?.maximumEventAgeInSeconds ?? DEFAULT_EVENT_AGE_SECONDS) * 1000;
    if (options.mayInvoke && !(await options.mayInvoke(target.functionArn))) {
      return deadLetter(
        event,
        target,
        'NO_PERMISSIONS',
        `EventBridge may not invoke ${target.functionArn}: no resource-based policy of the function allows it`,
        'MaximumRetryAttempts',
        0,
      );
    }
    let lastError = '';
    for (let attempt = 0; ; attempt++) {
      // Stopping with a retry pending: the event is kept in the dead-letter queue, to replay.
      if (closed && attempt > 0) return deadLetter(event, target, 'SDK_CLIENT_ERROR', lastError, 'MaximumRetryAttempts', attempt - 1);
      try {
        await options.invoke(target.functionArn, event);
        return;
      } catch (error) {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        lastError = message;
        const aged = scale > 0 && (Date.now() - publishedAt) / scale >= maxAgeMs;
        if (attempt >= retries || aged || closed) {
          return deadLetter(event, target, 'SDK_CLIENT_ERROR', message, aged ? 'MaximumEventAgeInSeconds' : 'MaximumRetryAttempts', attempt);
        }
        const delay = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
        const wait = Math.round(delay / 2 + Math.random() * (delay / 2));
        logger.warn(`event rule ${rule.name}: delivery of event ${id} to ${target.functionArn} failed (attempt ${attempt + 1}), retrying`);
        await sleep(wait);
      }
    }
  }

  async function deadLetter(event: unknown, target: Target, code: string, message: string, condition: string, retryAttempts: number): Promise<void> {
    const queue = target.deadLetterQueueArn ? options.deadLetterQueues.get(target.deadLetterQueueArn) : undefined;
    if (!queue) {
      logger.error(`event rule ${rule.name}: dropped event ${eventId(event)} for ${target.functionArn} (${code}); the target has no dead-letter queue`);
      return;
    }
    await queue.send(JSON.stringify(event), {
      RULE_ARN: rule.arn,
      TARGET_ARN: target.functionArn,
      ERROR_CODE: code,
      ERROR_MESSAGE: message,
      EXHAUSTED_RETRY_CONDITION: condition,
      RETRY_ATTEMPTS: String(retryAttempts),
    });
    logger.error(`event rule ${rule.name}: event ${eventId(event)} dead-lettered to ${queue.queue.name} (${code})`);
  }

  const drain = async () => {
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  };

  return {
    publish(event) {
      if (closed) {
        logger.warn(`event rule ${rule.name}: closed, dropped event ${eventId(event)}`);
        return;
      }
      if (!matchesEventPattern(pattern, event)) return;
      const publishedAt = Date.now();
      for (const target of rule.targets) {
        const delivery = deliver(event, target, publishedAt)
          .catch((error: unknown) => logger.error(`event rule ${rule.name}: ${String(error)}`))
          .finally(() => inFlight.delete(delivery));
        inFlight.add(delivery);
      }
    },
    async replay(letter) {
      const target = rule.targets.find((t) => t.functionArn === letter.attributes.TARGET_ARN);
      if (!target) return false;
      try {
        // A body is the event, or (in AWS, from the function's async invoke config) a failure record holding it.
        const body = JSON.parse(letter.body) as { requestPayload?: unknown };
        await options.invoke(target.functionArn, body.requestPayload !== undefined && body.requestPayload !== null ? body.requestPayload : body);
        return true;
      } catch (error) {
        logger.warn(`event rule ${rule.name}: replay of ${letter.messageId} failed: ${error instanceof Error ? error.message : String(error)}`);
        return false;
      }
    },
    drain,
    async close() {
      closed = true;
      // Pending backoffs end now: their events go to the dead-letter queue, as the process is stopping.
      for (const [timer, wake] of sleeping) {
        clearTimeout(timer);
        wake();
      }
      sleeping.clear();
      await drain();
    },
  };
}

function eventId(event: unknown): string {
  const id = (event as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : 'without id';
}
