/**
 * The webhook fan-out: each new log entry becomes one delivery job per live, active
 * subscription it matches, and an operation's end also ends its progress subscriptions:
 * "The server MUST terminate the event stream when the task reaches a terminal status"
 * (Task Event Sources), with a `terminated` envelope. Subscribing is webhook-subscriptions.ts.
 */
import { matchesFilter } from './event-filter.ts';
import { isPerOperation, type EventEntry } from './event-log.ts';
import type { WebhookDeliveryJob } from './webhook-delivery-job.ts';
import { isLive, type SubscriptionEnding, type WebhookSubscription } from './webhook-subscription.ts';
import type { WebhookDeps } from './webhook-subscriptions.ts';

export class WebhookFanOut {
  constructor(private readonly deps: WebhookDeps) {}

  /** Enqueues the jobs `entry` makes. */
  async fanOut(entry: EventEntry): Promise<void> {
    const now = this.deps.clock.now();
    const subscriptions = (await this.deps.store.listByOwner(entry.ownerId)).filter((s) => isLive(s, now) && s.ending === undefined);
    const jobs: WebhookDeliveryJob[] = subscriptions
      .filter((s) => s.active && s.name === entry.name && matchesFilter(s.arguments, entry))
      .map((s) => ({ subscriptionId: s.id, ownerKey: entry.ownerId, eventId: entry.eventId, attempt: 1 }));
    const ending = this.deps.operationEnded;
    if (entry.name === 'operation.finished' && ending) {
      for (const s of subscriptions.filter((candidate) => isPerOperation(candidate.name) && candidate.arguments.operationId === entry.operationId)) {
        if (await this.end(s, ending)) jobs.push({ subscriptionId: s.id, ownerKey: entry.ownerId, attempt: 1 });
      }
    }
    if (jobs.length > 0) await this.deps.queue.enqueue(jobs);
  }

  /** Marks a subscription as ended; `true` when this call ended it. */
  private async end(subscription: WebhookSubscription, ending: SubscriptionEnding): Promise<boolean> {
    const ended: WebhookSubscription = { ...subscription, ending, version: subscription.version + 1 };
    return this.deps.store.save(ended, subscription.version);
  }
}
