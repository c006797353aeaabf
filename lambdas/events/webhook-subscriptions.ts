/**
 * Webhook subscriptions (SEP-3415 "Webhook-Based Delivery"): the idempotent upsert behind
 * `events/subscribe` (TTL granted again, secret rotated with a grace window, delivery
 * reactivated), endpoint verification before a subscription first becomes active,
 * and `events/unsubscribe`. The fan-out of new log entries to delivery jobs is
 * webhook-fan-out.ts; delivery itself is webhook-delivery.ts. Sentences quoted are the SEP's.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock, Logger } from '../operations/ports.ts';
import { isObject } from '../shared/json-values.ts';
import { matchesFilter, type EventFilter } from './event-filter.ts';
import { INDEX_LAG_MS, isPerOperation, streamOf, timePosition, type EventEntry, type EventLog } from './event-log.ts';
import { OPERATION_FINISHED } from './event-names.ts';
import { MAX_OWED } from './owed-events.ts';
import { startOf } from './event-reader.ts';
import { EventsError } from './events-error.ts';
import { retentionMsOf, type EventsSettings } from './events-settings.ts';
import { verifyWithKeys, type ServerKey } from '../shared/server-key.ts';
import { secretBoxFor } from './secret-box.ts';
import { claimSlot, releaseSlot } from './subscription-slots.ts';
import type { WebhookDeliveryJob, WebhookDeliveryQueue } from './webhook-delivery-job.ts';
import { isLive, subscriptionIdFor, type SubscriptionEnding, type WebhookSubscription, type WebhookSubscriptionStore } from './webhook-subscription.ts';
import { controlMessageId, signWebhook } from './webhooks/webhook-signature.ts';
import type { WebhookSecret } from './webhooks/webhook-secret.ts';
import type { WebhookSender, WebhookSendResult } from './webhooks/webhook-sender.ts';

/** The most replayed events one subscribe enqueues; older ones are the client's to fetch by poll. */
const MAX_REPLAY = 100;
/** The grant when the client suggests none: an hour, or the maximum when that is shorter. */
const DEFAULT_TTL_SECONDS = 3600;
/** Compare-and-set attempts before a write gives up. */
const CAS_ATTEMPTS = 5;

export interface WebhookDeps {
  readonly store: WebhookSubscriptionStore;
  readonly log: EventLog;
  readonly send: WebhookSender;
  readonly queue: WebhookDeliveryQueue;
  readonly settings: EventsSettings;
  /** The server's key; signing secrets are sealed under the current one and open under any that still verifies. */
  readonly secretKey: ServerKey;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * The `terminated` error of a per-operation subscription whose operation ended (wire form,
   * from the edge's table); without it (the delivery function, which fans nothing out) such
   * subscriptions simply expire.
   */
  readonly operationEnded?: SubscriptionEnding;
}

export interface SubscribeRequest {
  readonly ownerId: string;
  readonly name: string;
  readonly arguments: EventFilter;
  readonly url: string;
  readonly secret: WebhookSecret;
  /** A log position, or `null` for "start from now". */
  readonly cursor: string | null;
  readonly maxAgeMs?: number;
  /** "Omitting the field means server default. An explicit ttlMs: null requests a subscription with no expiry." */
  readonly ttlMs?: number | null;
  /** Whether the operation `arguments.operationId` names has already ended: a per-operation subscription then gets its `terminated` at once. */
  readonly operationEnded?: boolean;
}

export interface SubscribeOutcome {
  readonly id: string;
  /** Epoch ms, or `null` for no expiry. */
  readonly refreshBefore: number | null;
  /** The safe-to-persist watermark, a log position. */
  readonly position: string;
  readonly truncated: boolean;
  /** On a refresh of a live subscription: how delivery was going before this refresh. */
  readonly deliveryStatus?: Record<string, unknown>;
}

export class WebhookSubscriptions {
  constructor(readonly deps: WebhookDeps) {}

  async subscribe(request: SubscribeRequest): Promise<SubscribeOutcome> {
    const { store, clock, settings } = this.deps;
    const startedAt = clock.now();
    const id = subscriptionIdFor(request.ownerId, request.url, request.name, request.arguments);
    const box = secretBoxFor(await this.deps.secretKey());
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const now = clock.now();
      const existing = await store.get(request.ownerId, id);
      const refreshBefore = this.grant(request.ttlMs, now);
      const sealed = box.seal(request.secret.text, sealContext(request.ownerId, id));
      if (existing && isLive(existing, now)) {
        // "If a subscription with the same scoped key exists, the server resets the TTL and updates the mutable fields in place."
        const current = existing.secrets[0] === undefined ? undefined : await this.open(existing, existing.secrets[0]);
        const rotated = current !== undefined && current !== request.secret.text;
        const refreshed: WebhookSubscription = {
          ...existing,
          // "The server SHOULD dual-sign ... with the old and new secrets for a short grace window"
          secrets: rotated && existing.secrets[0] ? [sealed, existing.secrets[0]] : [sealed, ...existing.secrets.slice(1)],
          ...(rotated ? { previousSecretUntil: now + settings.secretGraceSeconds * 1000 } : {}),
          refreshedAt: now,
          refreshBefore,
          // "A later successful refresh reactivates the subscription (sets active: true)"
          active: true,
          health: existing.active ? existing.health : { ...existing.health, windowStart: now, attempts: 0, failures: 0 },
          version: existing.version + 1,
        };
        // Its slot lasts as long as its new grant.
        await claimSlot(store, { ownerId: request.ownerId, id, until: refreshBefore, max: settings.maxSubscriptionsPerPrincipal, nowMs: now, force: true });
        if (!(await store.save(refreshed, existing.version))) continue;
        return { id, refreshBefore, position: this.watermark(refreshed, now), truncated: false, deliveryStatus: deliveryStatusOf(existing) };
      }
      // A new subscription, or one that lapsed: "the server creates a fresh subscription using the supplied cursor".
      const others = (await store.listByOwner(request.ownerId)).filter((s) => s.id !== id && isLive(s, now));
      // The slot is claimed before the verification POST: parallel subscribes each claim one, or are refused.
      const slot = { ownerId: request.ownerId, id, until: refreshBefore, max: settings.maxSubscriptionsPerPrincipal, nowMs: now };
      if ((await claimSlot(store, slot)) === 'refused') {
        throw new EventsError(
          'RESOURCE_EXHAUSTED',
          `Too many webhook subscriptions: at most ${settings.maxSubscriptionsPerPrincipal} per principal; unsubscribe one first`,
          {
            limit: 'subscriptions',
            max: settings.maxSubscriptionsPerPrincipal,
          },
        );
      }
      // "Verification is cached per (principal, url)": another live subscription of the caller to this URL was verified.
      if (!others.some((s) => s.url === request.url)) await this.verifyOrRelease(request.url, id, request.secret, request.ownerId);
      const start = startOf(request.cursor, request.maxAgeMs, this.readSettings(), now);
      const replayed = await this.replayable(request, start.position, now);
      // A subscription that ends with its operation waits for its replayed deliveries before `terminated`.
      const pending = isPerOperation(request.name) ? Object.fromEntries(replayed.map((entry) => [entry.eventId, now])) : {};
      const created: WebhookSubscription = {
        ownerId: request.ownerId,
        id,
        name: request.name,
        arguments: request.arguments,
        url: request.url,
        secrets: [sealed],
        createdAt: now,
        refreshedAt: now,
        refreshBefore,
        startPosition: start.position,
        active: true,
        health: { windowStart: now, attempts: 0, failures: 0 },
        ...(Object.keys(pending).length > 0 ? { pending } : {}),
        version: (existing?.version ?? 0) + 1,
      };
      if (!(await store.save(created, existing?.version))) continue;
      const jobs: WebhookDeliveryJob[] = replayed.map((entry) => ({
        subscriptionId: id,
        ownerKey: request.ownerId,
        eventId: entry.eventId,
        ...tracedBy(entry),
        attempt: 1,
      }));
      // "The server MUST terminate the event stream when the task reaches a terminal status": one that already has, at once
      // (after what it replays, marked pending); where the index may lag, after the second read (catchUp).
      const lagMs = this.deps.log.indexLagMs ?? INDEX_LAG_MS;
      if (request.operationEnded && isPerOperation(request.name) && lagMs <= 0) jobs.push(endJob(id, request.ownerId, []));
      if (jobs.length > 0) await this.deps.queue.enqueue(jobs);
      await this.catchUp(request, id, { from: start.position, replayed, startedAt, lagMs });
      return { id, refreshBefore, position: this.watermark(created, now), truncated: start.truncated };
    }
    throw new Error('The subscription kept changing while it was being written');
  }

  /** "events/unsubscribe resolves the subscription with the same key as events/subscribe." */
  async unsubscribe(request: { ownerId: string; name: string; arguments: EventFilter; url: string }): Promise<void> {
    const id = subscriptionIdFor(request.ownerId, request.url, request.name, request.arguments);
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const existing = await this.deps.store.get(request.ownerId, id);
      if (!existing || !isLive(existing, this.deps.clock.now())) {
        throw new EventsError('NOT_FOUND', 'No webhook subscription matches this name, arguments and delivery.url', { kind: 'subscription' });
      }
      if (await this.deps.store.delete(request.ownerId, id, existing.version)) {
        await releaseSlot(this.deps.store, request.ownerId, id, this.deps.clock.now());
        return;
      }
    }
    throw new Error('The subscription kept changing while it was being deleted');
  }

  /**
   * The cursor a body or a refresh carries: "a position at or before which everything has been
   * acknowledged or abandoned". A delivery is retried for a bounded time, so everything older
   * than that window has been; never before where the subscription started.
   */
  watermark(subscription: WebhookSubscription, nowMs: number): string {
    const { baseDelaySeconds, maxDelaySeconds, maxAttempts } = this.deps.settings.delivery;
    let retryWindowMs = 0;
    for (let attempt = 1; attempt < maxAttempts; attempt++) retryWindowMs += backoffSeconds(attempt, baseDelaySeconds, maxDelaySeconds) * 1000;
    // Jobs wait in the queue a little, and deliveries take their bounded time.
    const settled = timePosition(nowMs - retryWindowMs - 60_000 - this.deps.settings.settleMs);
    return [settled, subscription.startPosition].sort().at(-1) ?? settled;
  }

  /** The secrets that sign a delivery now, newest first. */
  async signingSecrets(subscription: WebhookSubscription, nowMs: number): Promise<WebhookSecret[]> {
    const inGrace = (subscription.previousSecretUntil ?? 0) > nowMs;
    const sealed = inGrace ? subscription.secrets : subscription.secrets.slice(0, 1);
    const texts = await Promise.all(sealed.map((s) => this.open(subscription, s)));
    return texts.map((text) => ({ text, key: Buffer.from(text.slice('whsec_'.length), 'base64') }));
  }

  /** A sealed secret of `subscription`, opened with the server's current key or one that still verifies (a rotation). */
  private open(subscription: WebhookSubscription, sealed: string): Promise<string> {
    return verifyWithKeys(
      this.deps.secretKey,
      (key) => secretBoxFor(key).open(sealed, sealContext(subscription.ownerId, subscription.id)),
      () => true,
    );
  }

  /** Verifies the endpoint; when it fails, the slot claimed for it is given back. */
  private async verifyOrRelease(url: string, id: string, secret: WebhookSecret, ownerId: string): Promise<void> {
    try {
      await this.verify(url, id, secret);
    } catch (error) {
      await releaseSlot(this.deps.store, ownerId, id, this.deps.clock.now()).catch((cause: unknown) =>
        this.deps.logger.warn('webhook subscription slot not released; it frees itself when its grant ends', {
          subscriptionId: id,
          error: cause instanceof Error ? cause.name : 'unknown',
        }),
      );
      throw error;
    }
  }

  /**
   * "Before activating, the server POSTs a verification control envelope that carries a
   * single-use, short-lived challenge nonce ... The endpoint proves intent by echoing the nonce
   * in a 2xx body ({"challenge":"<nonce>"}), which the server compares in constant time."
   */
  private async verify(url: string, id: string, secret: WebhookSecret): Promise<void> {
    const challenge = randomBytes(24).toString('base64url');
    const body = JSON.stringify({ type: 'verification', challenge });
    const headers = signWebhook({ id: controlMessageId('verification', `${id}\n${challenge}`), body, secrets: [secret] });
    const answer = await this.deps.send({ url, subscriptionId: id, body, headers: { ...headers } });
    if ('error' in answer) {
      this.deps.logger.warn('webhook verification failed', { subscriptionId: id, error: answer.error });
      throw callbackFailed(url, sendErrorCategory(answer), `could not be reached (${sendErrorCategory(answer)})`);
    }
    if (answer.status < 200 || answer.status > 299) {
      throw callbackFailed(url, answer.status >= 500 ? 'http_5xx' : 'http_4xx', `answered the verification with HTTP ${answer.status}, not 2xx`);
    }
    if (!echoes(answer.bodyText, challenge)) {
      throw callbackFailed(url, 'challenge_failed', `answered HTTP ${answer.status} without echoing the challenge ({"challenge":"<nonce>"} in the body)`);
    }
  }

  /**
   * What the log holds for a new subscription from its start position (the one its answer's
   * cursor names, the settled horizon for `cursor: null`) up to now, not only up to the
   * horizon: an entry logged in between was fanned out before this subscription existed, so
   * only this replay delivers it. A read may stop at a page cut (DynamoDB's 1 MB): the replay
   * reads on from where it stopped, up to MAX_REPLAY entries.
   */
  private async replayable(request: SubscribeRequest, from: string, nowMs: number): Promise<EventEntry[]> {
    const stream = streamOf(request.name, request.arguments.operationId ?? '');
    const through = timePosition(nowMs + 1);
    const found: EventEntry[] = [];
    let after = from;
    for (let read = 0; read < MAX_REPLAY && found.length < MAX_REPLAY; read++) {
      const page = await this.deps.log.read(request.ownerId, stream, { after, through, limit: MAX_REPLAY - found.length });
      found.push(...page.entries.filter((entry) => entry.name === request.name && matchesFilter(request.arguments, entry)));
      if (!page.more || page.reached <= after) break;
      after = page.reached;
    }
    return found;
  }

  /**
   * What the index did not show yet. An entry appended before this subscription was stored was
   * fanned out without it, and the replay read an index that may lag (DynamoDB's GSIs): once
   * the log's lag bound has passed since the write, a second read shows every such entry, and
   * what the first missed is enqueued. A per-operation subscription whose operation has ended,
   * or logged its end since the caller looked (it ended while this subscribe ran), then gets
   * its end job, owing what the first read missed.
   */
  private async catchUp(
    request: SubscribeRequest,
    id: string,
    { from, replayed, startedAt, lagMs }: { from: string; replayed: readonly EventEntry[]; startedAt: number; lagMs: number },
  ): Promise<void> {
    if (lagMs <= 0) return;
    await sleep(lagMs);
    const now = this.deps.clock.now();
    const known = new Set(replayed.map((entry) => entry.eventId));
    const missed = (await this.replayable(request, from, now)).filter((entry) => !known.has(entry.eventId));
    const jobs: WebhookDeliveryJob[] = missed.map((entry) => ({
      subscriptionId: id,
      ownerKey: request.ownerId,
      eventId: entry.eventId,
      ...tracedBy(entry),
      attempt: 1,
    }));
    if (isPerOperation(request.name) && (request.operationEnded || (await this.endedSince(request, startedAt, now))))
      jobs.push(endJob(id, request.ownerId, missed));
    if (jobs.length > 0) await this.deps.queue.enqueue(jobs);
  }

  /** Whether the operation a per-operation subscription names logged its end since `sinceMs` (less the time a write may take to land). */
  private async endedSince(request: SubscribeRequest, sinceMs: number, nowMs: number): Promise<boolean> {
    const operationId = request.arguments.operationId;
    if (operationId === undefined) return false;
    const range = { after: timePosition(sinceMs - this.deps.settings.settleMs), through: timePosition(nowMs + 1), limit: MAX_REPLAY };
    for (let read = 0; read < MAX_REPLAY; read++) {
      const page = await this.deps.log.read(request.ownerId, streamOf(OPERATION_FINISHED, operationId), range);
      if (page.entries.some((entry) => entry.operationId === operationId)) return true;
      if (!page.more || page.reached <= range.after) return false;
      range.after = page.reached;
    }
    return false;
  }

  /** "The client suggests, the server decides": default, clamped to [min, max], no expiry only when asked and allowed. */
  private grant(ttlMs: number | null | undefined, nowMs: number): number | null {
    const { minSubscriptionTtlSeconds, maxSubscriptionTtlSeconds, allowNoExpiry } = this.deps.settings;
    if (ttlMs === null && allowNoExpiry) return null;
    const wanted = ttlMs ?? DEFAULT_TTL_SECONDS * 1000;
    return nowMs + Math.min(Math.max(wanted, minSubscriptionTtlSeconds * 1000), maxSubscriptionTtlSeconds * 1000);
  }

  private readSettings() {
    return { retentionMs: retentionMsOf(this.deps.settings), settleMs: this.deps.settings.settleMs };
  }
}

/** The job that ends a new per-operation subscription, owing `unmarked` (replayed without a pending mark). */
function endJob(id: string, ownerId: string, unmarked: readonly EventEntry[]): WebhookDeliveryJob {
  const owed = unmarked.map((entry) => entry.eventId).slice(-MAX_OWED);
  return { subscriptionId: id, ownerKey: ownerId, ...(owed.length > 0 ? { owed } : {}), attempt: 1 };
}

/** A job's trace: its occurrence's, so a replayed delivery joins the operation's trace too. */
function tracedBy(entry: EventEntry): Pick<WebhookDeliveryJob, 'trace'> {
  return entry.trace ? { trace: entry.trace } : {};
}

/** The delay before try `attempt + 1`: doubling from the base, capped. */
export function backoffSeconds(attempt: number, baseSeconds: number, maxSeconds: number): number {
  return Math.min(maxSeconds, baseSeconds * 2 ** Math.max(0, attempt - 1));
}

/** A send error in SEP-3415's `lastError` categories; a refusal before any connection reads as refused. */
export function sendErrorCategory(result: Extract<WebhookSendResult, { error: string }>): string {
  return result.error === 'timeout' || result.error === 'tls_error' ? result.error : 'connection_refused';
}

/** `deliveryStatus` as a refresh response shows it: categories and times only. */
function deliveryStatusOf(subscription: WebhookSubscription): Record<string, unknown> {
  const { health } = subscription;
  return {
    active: subscription.active,
    lastDeliveryAt: health.lastDeliveryAt === undefined ? null : new Date(health.lastDeliveryAt).toISOString(),
    lastError: health.lastError ?? null,
    ...(health.failedSince === undefined ? {} : { failedSince: new Date(health.failedSince).toISOString() }),
  };
}

function callbackFailed(url: string, reason: string, what: string): EventsError {
  return new EventsError('CALLBACK_FAILED', `Callback endpoint ${url} ${what}`, { reason, url });
}

/** Whether a verification answer echoes the nonce, compared in constant time. */
function echoes(bodyText: string, challenge: string): boolean {
  let echoed: unknown;
  try {
    echoed = JSON.parse(bodyText);
  } catch {
    return false;
  }
  if (!isObject(echoed) || typeof echoed.challenge !== 'string') return false;
  const a = Buffer.from(echoed.challenge);
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Sealed secrets open only on the item they were sealed for. */
function sealContext(ownerId: string, id: string): string {
  return `${ownerId}\n${id}`;
}
