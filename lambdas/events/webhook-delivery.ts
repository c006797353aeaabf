/**
 * One try of one webhook delivery job (`DeliverWebhookJob`): load the subscription and the
 * occurrence, build the body (the EventOccurrence with its cursor watermark), sign it with
 * every active secret, POST it through the SSRF-guarded sender, record how it went
 * (`deliveryStatus`, suspension after sustained failure), and tell the transport what next:
 * "The server retries each event independently, with exponential backoff, on non-2xx
 * responses" and timeouts, a bounded number of times; 410 and 413 are final. A job without
 * an event ends its subscription (an operation's end, handed over by the fan-out): the record
 * is marked ended, the progress deliveries still pending go first, then the `terminated`
 * envelope; once it is sent (or given up on) the subscription is gone. "Pending" is not only
 * the retries already recorded: the end job names what the log held for the subscription when
 * the end was handed over (owed-events.ts), and a report among them whose try is still in
 * flight, or whose job is still queued behind the end, is one the record does not show
 * settled: the end sends it itself (under its `eventId`, which receivers dedupe on) before
 * `terminated`.
 *
 * Each POST is a span (kind CLIENT) under its occurrence's, in the operation's trace, and sends
 * its context as the W3C `traceparent` (and `tracestate`) header, so a receiver that traces
 * continues it; with tracing off the header carries the occurrence's context as stored.
 */
import type { TraceCarrier } from '../observability/trace-context.ts';
import { currentCarrier, SpanKind, withSpan } from '../observability/tracing.ts';
import { encodeEventCursor } from './event-cursor.ts';
import { isPerOperation, type EventEntry } from './event-log.ts';
import { occurrenceOf } from './event-occurrence.ts';
import { EVENT_SPAN_ATTRIBUTES } from './event-recorder.ts';
import type { DeliverWebhookJob, WebhookDeliveryJob, WebhookDeliveryOutcome } from './webhook-delivery-job.ts';
import { isLive, type DeliveryHealth, type WebhookSubscription } from './webhook-subscription.ts';
import { deleteEnded, markEnded, terminatedMessageId } from './webhook-subscription-end.ts';
import { backoffSeconds, sendErrorCategory, type WebhookSubscriptions } from './webhook-subscriptions.ts';
import { signWebhook } from './webhooks/webhook-signature.ts';

const CAS_ATTEMPTS = 5;
/**
 * Tries of an end job that may wait for pending deliveries before `terminated` goes anyway;
 * the delivery queue receives a job `maxAttempts` + 3 times before dead-lettering it.
 */
const PENDING_WAITS = 3;
/** A pending retry this long past its time was lost (its job failed outright): the end stops waiting for it. */
const PENDING_LOST_MS = 5 * 60_000;
/** How long past a pending retry's time the end looks again: that try's send, as most receivers answer; a slower one is waited for again. */
const PENDING_MARGIN_SECONDS = 5;
/** The settled events a record keeps: the latest ones, so it stays small; an older one the end finds again is sent again (receivers dedupe). */
const SETTLED_KEPT = 1000;

export function createDeliverWebhookJob(subscriptions: WebhookSubscriptions): DeliverWebhookJob {
  const { deps } = subscriptions;
  const { settings, clock, logger } = deps;

  /** What the transport does after a failed try; `maxAttempts` tries in all unless `limit` says more. */
  const retryOrDrop = (job: WebhookDeliveryJob, reason: string, limit = settings.delivery.maxAttempts): WebhookDeliveryOutcome =>
    job.attempt >= limit
      ? { kind: 'dropped', reason: `${reason}; gave up after ${job.attempt} tries` }
      : { kind: 'retry', afterSeconds: backoffSeconds(job.attempt, settings.delivery.baseDelaySeconds, settings.delivery.maxDelaySeconds), reason };

  /** Applies `change` to the stored subscription by compare-and-set, re-read on a conflict. */
  const update = async (subscription: WebhookSubscription, change: (current: WebhookSubscription, now: number) => WebhookSubscription) => {
    let current: WebhookSubscription | undefined = subscription;
    for (let attempt = 0; attempt < CAS_ATTEMPTS && current; attempt++) {
      const updated = change(current, clock.now());
      if (await deps.store.save({ ...updated, version: current.version + 1 }, current.version)) return { before: current, after: updated };
      current = await deps.store.get(subscription.ownerId, subscription.id);
    }
    return undefined;
  };

  /**
   * Records a try on the subscription: its health, suspension once failures are sustained, and,
   * for a subscription that ends with its operation, whether this event's delivery is pending.
   */
  const note = async (subscription: WebhookSubscription, error: string | undefined, pending?: { eventId: string; retryAt?: number }) => {
    const written = await update(subscription, (current, now) => {
      const windowOpen = now - current.health.windowStart < settings.suspension.windowMs;
      const base = windowOpen ? current.health : { ...current.health, windowStart: now, attempts: 0, failures: 0 };
      const health: DeliveryHealth =
        error === undefined
          ? { windowStart: base.windowStart, attempts: base.attempts + 1, failures: base.failures, lastDeliveryAt: now }
          : { ...base, attempts: base.attempts + 1, failures: base.failures + 1, lastError: error, failedSince: base.failedSince ?? now };
      // "a delivery failure rate above 95% over a rolling 60-minute window with a minimum of 100 delivery attempts"
      const { minAttempts, failureRate } = settings.suspension;
      const suspend = error !== undefined && health.attempts >= minAttempts && health.failures / health.attempts > failureRate;
      const updated = { ...current, health, active: current.active && !suspend };
      if (!pending) return updated;
      // A try that ends after the end sent its event (a slow receiver) leaves nothing pending.
      if (pending.retryAt !== undefined && current.settled?.includes(pending.eventId)) return updated;
      return pending.retryAt === undefined ? withSettled(updated, pending.eventId) : withPending(updated, pending.eventId, pending.retryAt);
    });
    if (written?.before.active && !written.after.active)
      logger.warn('webhook delivery suspended after sustained failure', { subscriptionId: subscription.id, attempts: written.after.health.attempts });
  };

  /** A job that delivers nothing more: settled first (its pending mark cleared), so the end neither waits for it nor sends it. */
  const drop = async (subscription: WebhookSubscription, eventId: string, reason: string): Promise<WebhookDeliveryOutcome> => {
    if (isPerOperation(subscription.name) && !subscription.settled?.includes(eventId)) await update(subscription, (current) => withSettled(current, eventId));
    return { kind: 'dropped', reason };
  };

  /** The body of one event's delivery: the occurrence with the subscription's watermark. */
  const eventBody = (subscription: WebhookSubscription, entry: EventEntry) =>
    JSON.stringify(occurrenceOf(entry, encodeEventCursor(subscriptions.watermark(subscription, clock.now()))));

  /**
   * What an ended subscription still owes before `terminated`, in log order: the events its end
   * job names (read from the log by whoever handed the end over) that its record does not show
   * settled, each read by its key, as the delivery role may.
   */
  const owedBy = async (job: WebhookDeliveryJob, ended: WebhookSubscription): Promise<EventEntry[]> => {
    const settled = new Set(ended.settled ?? []);
    const endedAt = ended.endedAt ?? Number.POSITIVE_INFINITY;
    const owed: EventEntry[] = [];
    for (const eventId of job.owed ?? []) {
      if (settled.has(eventId)) continue;
      const entry = await deps.log.get(ended.ownerId, eventId);
      // Gone past retention: the cursor in every body already recovers what is older.
      if (entry && entry.loggedAt <= endedAt) owed.push(entry);
    }
    return owed;
  };

  /** Sends what `ended` still owes, in order; a failed try as the outcome for the end to retry on, or `undefined` once all went (or were refused for good). */
  const sendOwed = async (job: WebhookDeliveryJob, ended: WebhookSubscription): Promise<WebhookDeliveryOutcome | undefined> => {
    for (const entry of await owedBy(job, ended)) {
      const answer = await post(ended, entry.eventId, eventBody(ended, entry), { name: entry.name, trace: entry.trace ?? job.trace });
      if ('error' in answer && answer.error === 'body_too_large') {
        await drop(ended, entry.eventId, 'the body is over 256 KiB');
        continue;
      }
      const delivered = !('error' in answer) && answer.status >= 200 && answer.status <= 299;
      const error = delivered ? undefined : 'error' in answer ? sendErrorCategory(answer) : answer.status >= 500 ? 'http_5xx' : 'http_4xx';
      // As for its own job: 410 and 413 are final, anything else is tried again (the end waits for it).
      const refused = !('error' in answer) && (answer.status === 410 || answer.status === 413);
      if (!delivered && !refused) {
        await note(ended, error);
        return retryOrDrop(job, `terminated waits for ${entry.eventId}: ${error}`, PENDING_WAITS);
      }
      await note(ended, error, { eventId: entry.eventId });
    }
    return undefined;
  };

  /**
   * Sends a signed body in a span under `sent.trace`; the answer as the outcome (before retry
   * decisions), and the error category if it failed. The span names ids only: the callback URL
   * may hold a receiver's token.
   */
  const post = async (subscription: WebhookSubscription, messageId: string, body: string, sent: { name: string; trace: TraceCarrier | undefined }) => {
    const attributes = {
      'http.request.method': 'POST',
      [EVENT_SPAN_ATTRIBUTES.eventName]: sent.name,
      'async_mcp.webhook.message_id': messageId,
      'async_mcp.webhook.subscription_id': subscription.id,
    };
    return withSpan(`webhook ${sent.name}`, { kind: SpanKind.CLIENT, attributes, ...(sent.trace ? { parent: sent.trace } : {}) }, async (span) => {
      const secrets = await subscriptions.signingSecrets(subscription, clock.now());
      const headers: Record<string, string> = { ...signWebhook({ id: messageId, body, secrets }) };
      const carrier = currentCarrier() ?? sent.trace;
      if (carrier) {
        headers.traceparent = carrier.traceparent;
        if (carrier.tracestate) headers.tracestate = carrier.tracestate;
      }
      const answer = await deps.send({ url: subscription.url, subscriptionId: subscription.id, body, headers });
      if ('error' in answer) span.setAttribute('error.type', answer.error);
      else span.setAttribute('http.response.status_code', answer.status);
      return answer;
    });
  };

  /** An end job: mark the subscription ended, wait (boundedly) for its pending deliveries, then send `terminated`. */
  const end = async (job: WebhookDeliveryJob, subscription: WebhookSubscription): Promise<WebhookDeliveryOutcome> => {
    let ended = subscription;
    if (!ended.ending) {
      if (!deps.operationEnded) return { kind: 'dropped', reason: 'no event and no ending to send' };
      const marked = await markEnded(deps.store, ended, deps.operationEnded, clock.now());
      if (!marked) return { kind: 'dropped', reason: 'the subscription is gone' };
      ended = marked;
    }
    const now = clock.now();
    const waitingFor = Object.values(ended.pending ?? {}).filter((retryAt) => retryAt + PENDING_LOST_MS > now);
    if (waitingFor.length > 0 && job.attempt <= PENDING_WAITS) {
      const untilLast = Math.ceil((Math.max(...waitingFor) - now) / 1000) + PENDING_MARGIN_SECONDS;
      const afterSeconds = Math.min(settings.delivery.maxDelaySeconds, Math.max(1, untilLast));
      return { kind: 'retry', afterSeconds, reason: `terminated waits for ${waitingFor.length} pending deliveries` };
    }
    // Reports in flight or still queued are not on the record as pending: the end job names what is owed.
    if (ended.active && isPerOperation(ended.name) && job.attempt <= PENDING_WAITS) {
      const owing = await sendOwed(job, ended);
      if (owing?.kind === 'retry') return owing;
    }
    const body = JSON.stringify({ type: 'terminated', error: ended.ending });
    const answer = await post(ended, terminatedMessageId(ended), body, { name: 'terminated', trace: job.trace });
    const delivered = !('error' in answer) && answer.status >= 200 && answer.status <= 299;
    const reason = 'error' in answer ? sendErrorCategory(answer) : `HTTP ${answer.status}`;
    const outcome = delivered ? ({ kind: 'delivered' } as const) : retryOrDrop(job, reason, settings.delivery.maxAttempts + PENDING_WAITS);
    // Sent or given up on: "The subscription no longer exists".
    if (outcome.kind !== 'retry') await deleteEnded(deps.store, ended, clock.now());
    return outcome;
  };

  const deliverEvent = async (job: WebhookDeliveryJob, eventId: string, subscription: WebhookSubscription): Promise<WebhookDeliveryOutcome> => {
    const now = clock.now();
    if (!isLive(subscription, now)) {
      // Deleted here, where the role may: status sync lists subscriptions but may not delete them. A refresh since the read keeps it (the version moved).
      await deps.store.delete(subscription.ownerId, subscription.id, subscription.version);
      return { kind: 'dropped', reason: 'the subscription expired' };
    }
    // Suspended: the event is abandoned; the client's cursor (a refresh, a poll) recovers it.
    if (!subscription.active) return drop(subscription, eventId, 'delivery is suspended');
    // Already delivered (by the end, or by an earlier copy of this job): nothing to send again.
    if (subscription.settled?.includes(eventId)) {
      if (subscription.pending?.[eventId] !== undefined) await update(subscription, (current) => withSettled(current, eventId));
      return { kind: 'dropped', reason: 'the event was already delivered' };
    }
    const entry = await deps.log.get(job.ownerKey, eventId);
    if (!entry) return drop(subscription, eventId, 'the event is past retention');
    // Events logged before the end are still delivered, before `terminated`.
    if (subscription.ending && entry.loggedAt > (subscription.endedAt ?? Number.POSITIVE_INFINITY))
      return drop(subscription, eventId, 'the subscription has ended');
    const body = eventBody(subscription, entry);
    // "webhook-id is the eventId for event deliveries"; "Each retry attempt MUST regenerate the timestamp and signature."
    const answer = await post(subscription, entry.eventId, body, { name: entry.name, trace: job.trace ?? entry.trace });
    if ('error' in answer && answer.error === 'body_too_large') return drop(subscription, eventId, 'the body is over 256 KiB');
    let error: string | undefined;
    let outcome: WebhookDeliveryOutcome;
    if ('error' in answer) {
      error = sendErrorCategory(answer);
      outcome = retryOrDrop(job, error);
    } else if (answer.status >= 200 && answer.status <= 299) {
      outcome = { kind: 'delivered' };
    } else {
      error = answer.status >= 500 ? 'http_5xx' : 'http_4xx';
      // "The server MUST treat 410 as a non-retryable failure for that delivery (like 413)"
      outcome =
        answer.status === 410 || answer.status === 413
          ? { kind: 'dropped', reason: `the receiver answered HTTP ${answer.status}` }
          : retryOrDrop(job, `HTTP ${answer.status}`);
    }
    // Only a subscription that ends with its operation waits for its pending deliveries.
    const retryAt = outcome.kind === 'retry' ? clock.now() + outcome.afterSeconds * 1000 : undefined;
    await note(subscription, error, isPerOperation(subscription.name) ? { eventId, ...(retryAt === undefined ? {} : { retryAt }) } : undefined);
    return outcome;
  };

  return async (job) => {
    const subscription = await deps.store.get(job.ownerKey, job.subscriptionId);
    if (!subscription) return { kind: 'dropped', reason: 'the subscription is gone' };
    return job.eventId === undefined ? end(job, subscription) : deliverEvent(job, job.eventId, subscription);
  };
}

/** `subscription` with `eventId`'s delivery over: no longer pending, and settled (the latest `SETTLED_KEPT` kept). */
function withSettled(subscription: WebhookSubscription, eventId: string): WebhookSubscription {
  const settled = [...(subscription.settled ?? []).filter((id) => id !== eventId), eventId].slice(-SETTLED_KEPT);
  return { ...withPending(subscription, eventId, undefined), settled };
}

/** `subscription` with `eventId`'s delivery pending until `retryAt`, or no longer pending (`undefined`). */
function withPending(subscription: WebhookSubscription, eventId: string, retryAt: number | undefined): WebhookSubscription {
  const { pending: _, ...rest } = subscription;
  const pending = { ...subscription.pending };
  if (retryAt === undefined) delete pending[eventId];
  else pending[eventId] = retryAt;
  return Object.keys(pending).length === 0 ? rest : { ...rest, pending };
}
