/**
 * A webhook subscription as the server keeps it (SEP-3415 "Webhook-Based Delivery"): keyed by
 * its owner and its derived id, which is "deterministic over (principal, delivery.url, name,
 * arguments)"; its signing secrets sealed with the server's key; the TTL it was granted; where
 * delivery started; and how delivery is going. The store is a port with one DynamoDB adapter
 * and one in-memory version; writes are compare-and-set on `version`.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../operations/fingerprint.ts';
import type { EventFilter } from './event-filter.ts';

/** How delivery to the callback is going, for `deliveryStatus` and suspension. */
export interface DeliveryHealth {
  /** Epoch ms of the last 2xx. */
  readonly lastDeliveryAt?: number;
  /** A category (`connection_refused`, `timeout`, `tls_error`, `http_4xx`, `http_5xx`), never an answer's content. */
  readonly lastError?: string;
  /** Epoch ms of the first failure since the last success. */
  readonly failedSince?: number;
  /** The current rolling window: when it began, its tries and its failures. */
  readonly windowStart: number;
  readonly attempts: number;
  readonly failures: number;
}

/** The `terminated` envelope a subscription's end sends: a JSON-RPC error, already in wire form. */
export interface SubscriptionEnding {
  readonly code: number;
  readonly message: string;
  readonly data?: Record<string, unknown>;
}

export interface WebhookSubscription {
  readonly ownerId: string;
  readonly id: string;
  readonly name: string;
  /** The validated arguments, which filter the owner's occurrences. */
  readonly arguments: EventFilter;
  readonly url: string;
  /** Sealed secrets (secret-box.ts), newest first: the current one, then the one it replaced while the grace window lasts. */
  readonly secrets: readonly string[];
  /** Epoch ms until which the replaced secret still signs. */
  readonly previousSecretUntil?: number;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly refreshedAt: number;
  /** Epoch ms of the granted expiry; `null`: no expiry. */
  readonly refreshBefore: number | null;
  /** The log position delivery started from (a subscription never replays before it). */
  readonly startPosition: string;
  /** `false` while delivery is suspended after sustained failure; a refresh sets it again. */
  readonly active: boolean;
  readonly health: DeliveryHealth;
  /** Set when the server ends the subscription: the `terminated` envelope still to send. */
  readonly ending?: SubscriptionEnding;
  /** Epoch ms at which `ending` was set: events logged up to then are still delivered, and it names the `terminated` envelope. */
  readonly endedAt?: number;
  /** Deliveries whose last try is to be retried: event id to the epoch ms of its next try. `terminated` waits for them. */
  readonly pending?: Readonly<Record<string, number>>;
  /**
   * For a subscription that ends with its operation: the events whose delivery is over
   * (acknowledged or given up on), the latest last. The end sends what the log holds beyond
   * them before `terminated`, and a repeated job for one of them sends nothing.
   */
  readonly settled?: readonly string[];
  /** Compare-and-set counter, from 1. */
  readonly version: number;
}

/** The store port. Expiry is the caller's concern: reads return what is stored. */
export interface WebhookSubscriptionStore {
  get(ownerId: string, id: string): Promise<WebhookSubscription | undefined>;
  /**
   * Every subscription of the owner, however many are stored, expired ones included (their
   * grant is the caller's to check); an index read, which may lag a moment behind a write.
   */
  listByOwner(ownerId: string): Promise<WebhookSubscription[]>;
  /**
   * Writes `subscription` if the stored one still has `expectedVersion` (`undefined`: none is
   * stored). `false` when another write came first.
   */
  save(subscription: WebhookSubscription, expectedVersion: number | undefined): Promise<boolean>;
  /** Deletes it if still at `expectedVersion`; `false` when it changed or is gone. */
  delete(ownerId: string, id: string, expectedVersion: number): Promise<boolean>;
  /** The owner's subscription slots; `{ held: {}, version: 0 }` when none is stored. */
  getSlots(ownerId: string): Promise<SubscriptionSlots>;
  /** Writes the owner's slots if the stored ones are still at `expectedVersion` (0: none stored); `false` when another write came first. */
  saveSlots(ownerId: string, slots: SubscriptionSlots, expectedVersion: number): Promise<boolean>;
}

/**
 * The per-principal cap's counter: one record per owner naming each subscription that holds a
 * slot, with the end of its grant (epoch ms, `null`: no expiry), so a lapsed one frees its slot.
 */
export interface SubscriptionSlots {
  readonly held: Readonly<Record<string, number | null>>;
  /** Compare-and-set counter; 0 while none is stored. */
  readonly version: number;
}

/** "a truncated SHA-256 of the canonical key serialization": 128 bits, stable across refreshes and restarts. */
export function subscriptionIdFor(ownerId: string, url: string, name: string, args: EventFilter): string {
  return `sub_${createHash('sha256')
    .update(canonicalJson([ownerId, url, name, args]))
    .digest('hex')
    .slice(0, 32)}`;
}

/** Whether the subscription's grant still holds at `nowMs`. */
export function isLive(subscription: Pick<WebhookSubscription, 'refreshBefore'>, nowMs: number): boolean {
  return subscription.refreshBefore === null || subscription.refreshBefore > nowMs;
}
