/**
 * One try of one webhook delivery job (`DeliverWebhookJob`): load the subscription and the
 * occurrence, build the body (the EventOccurrence with its cursor watermark), sign it with
 * every active secret, POST it through the SSRF-guarded sender, record how it went
 * (`deliveryStatus`, suspension after sustained failure), and tell the transport what next:
 * "The server retries each event independently, with exponential backoff, on non-2xx
 * responses" and timeouts, a bounded number of times; 410 and 413 are final. A job without
 * an event is the subscription's `terminated` envelope; once it is sent (or given up on) the
 * subscription is gone.
 */
import { encodeEventCursor } from './event-cursor.ts';
import { occurrenceOf } from './event-occurrence.ts';
import type { DeliverWebhookJob, WebhookDeliveryJob, WebhookDeliveryOutcome } from './webhook-delivery-job.ts';
import { isLive, type DeliveryHealth, type WebhookSubscription } from './webhook-subscription.ts';
import { backoffSeconds, sendErrorCategory, type WebhookSubscriptions } from './webhook-subscriptions.ts';
import { controlMessageId, signWebhook } from './webhooks/webhook-signature.ts';

const CAS_ATTEMPTS = 5;

export function createDeliverWebhookJob(subscriptions: WebhookSubscriptions): DeliverWebhookJob {
  const { deps } = subscriptions;
  const { settings, clock, logger } = deps;

  /** What the transport does after a failed try. */
  const retryOrDrop = (job: WebhookDeliveryJob, reason: string): WebhookDeliveryOutcome =>
    job.attempt >= settings.delivery.maxAttempts
      ? { kind: 'dropped', reason: `${reason}; gave up after ${job.attempt} tries` }
      : { kind: 'retry', afterSeconds: backoffSeconds(job.attempt, settings.delivery.baseDelaySeconds, settings.delivery.maxDelaySeconds), reason };

  /** Records a try on the subscription: its health, and suspension once failures are sustained. */
  const note = async (subscription: WebhookSubscription, error: string | undefined): Promise<void> => {
    let current: WebhookSubscription | undefined = subscription;
    for (let attempt = 0; attempt < CAS_ATTEMPTS && current; attempt++) {
      const now = clock.now();
      const windowOpen = now - current.health.windowStart < settings.suspension.windowMs;
      const base = windowOpen ? current.health : { ...current.health, windowStart: now, attempts: 0, failures: 0 };
      const health: DeliveryHealth =
        error === undefined
          ? { windowStart: base.windowStart, attempts: base.attempts + 1, failures: base.failures, lastDeliveryAt: now }
          : { ...base, attempts: base.attempts + 1, failures: base.failures + 1, lastError: error, failedSince: base.failedSince ?? now };
      // "a delivery failure rate above 95% over a rolling 60-minute window with a minimum of 100 delivery attempts"
      const { minAttempts, failureRate } = settings.suspension;
      const suspend = error !== undefined && health.attempts >= minAttempts && health.failures / health.attempts > failureRate;
      const updated: WebhookSubscription = { ...current, health, active: current.active && !suspend, version: current.version + 1 };
      if (await deps.store.save(updated, current.version)) {
        if (suspend && current.active)
          logger.warn('webhook delivery suspended after sustained failure', { subscriptionId: current.id, attempts: health.attempts });
        return;
      }
      current = await deps.store.get(subscription.ownerId, subscription.id);
    }
  };

  /** Sends a signed body; the answer as the outcome (before retry decisions), and the error category if it failed. */
  const post = async (subscription: WebhookSubscription, messageId: string, body: string) => {
    const secrets = await subscriptions.signingSecrets(subscription, clock.now());
    const headers = signWebhook({ id: messageId, body, secrets });
    return deps.send({ url: subscription.url, subscriptionId: subscription.id, body, headers: { ...headers } });
  };

  const terminate = async (job: WebhookDeliveryJob, subscription: WebhookSubscription): Promise<WebhookDeliveryOutcome> => {
    const body = JSON.stringify({ type: 'terminated', error: subscription.ending });
    const answer = await post(subscription, controlMessageId('terminated'), body);
    const delivered = !('error' in answer) && answer.status >= 200 && answer.status <= 299;
    const outcome = delivered ? ({ kind: 'delivered' } as const) : retryOrDrop(job, 'error' in answer ? sendErrorCategory(answer) : `HTTP ${answer.status}`);
    // Sent or given up on: "The subscription no longer exists".
    if (outcome.kind !== 'retry') await deps.store.delete(subscription.ownerId, subscription.id, subscription.version);
    return outcome;
  };

  return async (job) => {
    const subscription = await deps.store.get(job.ownerKey, job.subscriptionId);
    if (!subscription) return { kind: 'dropped', reason: 'the subscription is gone' };
    if (job.eventId === undefined) return subscription.ending ? terminate(job, subscription) : { kind: 'dropped', reason: 'no event and no ending to send' };
    const now = clock.now();
    if (!isLive(subscription, now)) return { kind: 'dropped', reason: 'the subscription expired' };
    if (subscription.ending) return { kind: 'dropped', reason: 'the subscription has ended' };
    // Suspended: the event is abandoned; the client's cursor (a refresh, a poll) recovers it.
    if (!subscription.active) return { kind: 'dropped', reason: 'delivery is suspended' };
    const entry = await deps.log.get(job.ownerKey, job.eventId);
    if (!entry) return { kind: 'dropped', reason: 'the event is past retention' };
    const body = JSON.stringify(occurrenceOf(entry, encodeEventCursor(subscriptions.watermark(subscription, now))));
    // "webhook-id is the eventId for event deliveries"; "Each retry attempt MUST regenerate the timestamp and signature."
    const answer = await post(subscription, entry.eventId, body);
    if ('error' in answer) {
      if (answer.error === 'body_too_large') return { kind: 'dropped', reason: 'the body is over 256 KiB' };
      const category = sendErrorCategory(answer);
      await note(subscription, category);
      return retryOrDrop(job, category);
    }
    if (answer.status >= 200 && answer.status <= 299) {
      await note(subscription, undefined);
      return { kind: 'delivered' };
    }
    const category = answer.status >= 500 ? 'http_5xx' : 'http_4xx';
    await note(subscription, category);
    // "The server MUST treat 410 as a non-retryable failure for that delivery (like 413)"
    if (answer.status === 410 || answer.status === 413) return { kind: 'dropped', reason: `the receiver answered HTTP ${answer.status}` };
    return retryOrDrop(job, `HTTP ${answer.status}`);
  };
}
