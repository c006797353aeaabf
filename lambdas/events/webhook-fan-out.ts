/**
 * The webhook fan-out: each new log entry becomes one delivery job per live, active
 * subscription it matches, and an operation's end also becomes one job without an event for
 * each of its progress subscriptions: "The server MUST terminate the event stream when the
 * task reaches a terminal status" (Task Event Sources). The delivery function marks such a
 * subscription ended and sends its `terminated` envelope (webhook-delivery.ts): the fan-out
 * writes no subscription, so it needs no grant on them beyond their listing (status sync's role
 * may write event items only), and nothing but the listing comes before the one enqueue.
 * Subscribing is webhook-subscriptions.ts.
 *
 * Most principals subscribe to nothing, and every appended occurrence comes here: so the
 * owner's subscription slots (subscription-slots.ts, one small item) are read first, and the
 * listing (an owner-index Query, which reads every subscription still stored, expired ones a day
 * past their grant included) is made only when one of them is live. Every live subscription
 * holds a live slot: a subscribe claims it before the subscription is written, a refresh
 * extends it, and it is given back only after the subscription is deleted.
 */
import { matchesFilter } from './event-filter.ts';
import { isPerOperation, type EventEntry } from './event-log.ts';
import type { WebhookDeliveryJob } from './webhook-delivery-job.ts';
import { isLive, type SubscriptionSlots, type WebhookSubscriptionStore } from './webhook-subscription.ts';
import type { WebhookDeps } from './webhook-subscriptions.ts';

export class WebhookFanOut {
  constructor(private readonly deps: WebhookDeps) {}

  /** Enqueues the jobs `entry` makes, all in one enqueue; how many there were. */
  async fanOut(entry: EventEntry): Promise<number> {
    const now = this.deps.clock.now();
    if (!hasLiveSlot(await slotsForFanOut(this.deps.store, entry.ownerId), now)) return 0;
    const subscriptions = (await this.deps.store.listByOwner(entry.ownerId)).filter((s) => isLive(s, now) && s.ending === undefined);
    const jobs: WebhookDeliveryJob[] = subscriptions
      .filter((s) => s.active && s.name === entry.name && matchesFilter(s.arguments, entry))
      .map((s) => ({ subscriptionId: s.id, ownerKey: entry.ownerId, eventId: entry.eventId, attempt: 1 }));
    if (entry.name === 'operation.finished' && this.deps.operationEnded) {
      const ended = subscriptions.filter((s) => isPerOperation(s.name) && s.arguments.operationId === entry.operationId);
      // No eventId: the delivery function ends the subscription and sends `terminated`.
      for (const s of ended) jobs.push({ subscriptionId: s.id, ownerKey: entry.ownerId, attempt: 1 });
    }
    if (jobs.length > 0) await this.deps.queue.enqueue(jobs);
    return jobs.length;
  }
}

/** The owner's slots, read eventually consistent where the store can (`getSlotsEventually`). */
function slotsForFanOut(store: WebhookSubscriptionStore, ownerId: string): Promise<SubscriptionSlots> {
  return store.getSlotsEventually ? store.getSlotsEventually(ownerId) : store.getSlots(ownerId);
}

function hasLiveSlot(slots: SubscriptionSlots, nowMs: number): boolean {
  return Object.values(slots.held).some((until) => until === null || until > nowMs);
}
