/**
 * The webhook fan-out: each new log entry becomes one delivery job per live, active
 * subscription it matches, and an operation's end also becomes one job without an event for
 * each of its progress subscriptions: "The server MUST terminate the event stream when the
 * task reaches a terminal status" (Task Event Sources). The delivery function marks such a
 * subscription ended, sends the reports the job says it is owed, then its `terminated`
 * envelope (webhook-delivery.ts): the fan-out writes no subscription, so it needs no grant on
 * them beyond their listing (status sync's role may write event items only), and nothing but
 * reads comes before the one enqueue. An end job's owed reports are read once the log's index
 * shows every entry logged before the end (owed-events.ts): a progress subscription's end
 * waits about a second for it. Subscribing is webhook-subscriptions.ts.
 *
 * Most principals subscribe to nothing, and every appended occurrence comes here: so the
 * owner's subscription slots (subscription-slots.ts, one small item) are read first, and the
 * listing (an owner-index Query, which reads every subscription still stored, expired ones a day
 * past their grant included) is made only when one of them is live. Every live subscription
 * holds a live slot: a subscribe claims it before the subscription is written, a refresh
 * extends it, and it is given back only after the subscription is deleted.
 *
 * The owner index is eventually consistent (DynamoDB's GSIs lag a write by up to about a
 * second), so the listing may not show a subscription written a moment ago. The slots are read
 * consistently, and a live slot the listing does not show is read by its key: a subscription
 * stored before this fan-out read is always reached. One stored after it replays this entry
 * itself, once the log's index shows it (webhook-subscriptions.ts).
 */
import { matchesFilter } from './event-filter.ts';
import { isPerOperation, type EventEntry } from './event-log.ts';
import { owedEvents, untilIndexed } from './owed-events.ts';
import type { WebhookDeliveryJob } from './webhook-delivery-job.ts';
import { isLive, type WebhookSubscription } from './webhook-subscription.ts';
import type { WebhookDeps } from './webhook-subscriptions.ts';

export class WebhookFanOut {
  constructor(private readonly deps: WebhookDeps) {}

  /** Enqueues the jobs `entry` makes, all in one enqueue; how many there were. */
  async fanOut(entry: EventEntry): Promise<number> {
    const now = this.deps.clock.now();
    const slots = await this.deps.store.getSlots(entry.ownerId);
    const held = Object.entries(slots.held).filter(([, until]) => until === null || until > now);
    if (held.length === 0) return 0;
    const listed = await this.deps.store.listByOwner(entry.ownerId);
    const unlisted = held.filter(([id]) => !listed.some((s) => s.id === id)).map(([id]) => this.deps.store.get(entry.ownerId, id));
    const found = (await Promise.all(unlisted)).filter((s): s is WebhookSubscription => s !== undefined);
    const traced = entry.trace ? { trace: entry.trace } : {};
    const subscriptions = [...listed, ...found].filter((s) => isLive(s, now) && s.ending === undefined);
    const jobs: WebhookDeliveryJob[] = subscriptions
      .filter((s) => s.active && s.name === entry.name && matchesFilter(s.arguments, entry))
      .map((s) => ({ subscriptionId: s.id, ownerKey: entry.ownerId, eventId: entry.eventId, ...traced, attempt: 1 }));
    if (entry.name === 'operation.finished' && this.deps.operationEnded) {
      const ended = subscriptions.filter((s) => isPerOperation(s.name) && s.arguments.operationId === entry.operationId);
      // No eventId: the delivery function ends the subscription and sends what it is still owed, then `terminated`.
      if (ended.length > 0) await untilIndexed(this.deps.log, entry.loggedAt, this.deps.clock);
      for (const s of ended) {
        const owed = await owedEvents(this.deps.log, s, now);
        jobs.push({ subscriptionId: s.id, ownerKey: entry.ownerId, ...(owed.length > 0 ? { owed } : {}), ...traced, attempt: 1 });
      }
    }
    if (jobs.length > 0) await this.deps.queue.enqueue(jobs);
    return jobs.length;
  }
}
