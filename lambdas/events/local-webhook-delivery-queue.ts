/**
 * The webhook delivery queue of a single process (`npm start`): each job runs off the request
 * path on a timer, a retry runs again after its backoff, as the SQS queue and the delivery
 * function do in AWS. Jobs live in memory only; a restart forgets them (clients recover with
 * their cursors).
 */
import type { Logger } from '../operations/ports.ts';
import type { DeliverWebhookJob, WebhookDeliveryJob, WebhookDeliveryQueue } from './webhook-delivery-job.ts';

export interface LocalWebhookDeliveryQueue extends WebhookDeliveryQueue {
  /** Resolves once no job is waiting or running (retries included). */
  drain(): Promise<void>;
  /** Stops: waiting jobs are forgotten, running ones finish. */
  close(): Promise<void>;
}

/** `deliver` is asked for when the first job runs, so the queue can be built before what delivers. */
export function createLocalWebhookDeliveryQueue(deliver: () => DeliverWebhookJob, logger: Logger): LocalWebhookDeliveryQueue {
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  let idle: Array<() => void> = [];
  let closed = false;

  const settleIfIdle = () => {
    if (timers.size > 0 || running.size > 0) return;
    const waiting = idle;
    idle = [];
    for (const resolve of waiting) resolve();
  };

  const schedule = (job: WebhookDeliveryJob, delayMs: number) => {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      const run = runOnce(job).finally(() => {
        running.delete(run);
        settleIfIdle();
      });
      running.add(run);
    }, delayMs);
    timers.add(timer);
  };

  const runOnce = async (job: WebhookDeliveryJob) => {
    try {
      const outcome = await deliver()(job);
      if (outcome.kind === 'retry') schedule({ ...job, attempt: job.attempt + 1 }, outcome.afterSeconds * 1000);
      else if (outcome.kind === 'dropped')
        logger.info?.('webhook delivery dropped', { subscriptionId: job.subscriptionId, eventId: job.eventId, reason: outcome.reason });
    } catch (error) {
      logger.error('webhook delivery failed', {
        subscriptionId: job.subscriptionId,
        eventId: job.eventId,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    }
  };

  return {
    async enqueue(jobs) {
      for (const job of jobs) schedule(job, 0);
    },
    drain() {
      return new Promise((resolve) => {
        idle.push(resolve);
        settleIfIdle();
      });
    },
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running]);
      settleIfIdle();
    },
  };
}
