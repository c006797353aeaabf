/**
 * Webhook subscriptions in memory: for unit tests, and for a single-process server (the local
 * stack's default). With `indexLagMs`, `listByOwner` (DynamoDB's owner index) shows each write
 * that long (real time) after it was made, as an eventually consistent index may; `get` and
 * the slots read the item itself and never lag.
 */
import type { SubscriptionSlots, WebhookSubscription, WebhookSubscriptionStore } from './webhook-subscription.ts';

export class InMemoryWebhookSubscriptions implements WebhookSubscriptionStore {
  readonly #items = new Map<string, WebhookSubscription>();
  /** What the index shows of each key: its writes in order, each from the moment it reaches the index (`undefined`: deleted). */
  readonly #indexed = new Map<string, Array<{ visibleAt: number; subscription: WebhookSubscription | undefined }>>();
  readonly #indexLagMs: number;

  constructor(options: { readonly indexLagMs?: number } = {}) {
    this.#indexLagMs = options.indexLagMs ?? 0;
  }

  async get(ownerId: string, id: string): Promise<WebhookSubscription | undefined> {
    const found = this.#items.get(key(ownerId, id));
    return found && structuredClone(found);
  }

  async listByOwner(ownerId: string): Promise<WebhookSubscription[]> {
    const now = Date.now();
    const listed: WebhookSubscription[] = [];
    for (const versions of this.#indexed.values()) {
      const shown = versions.filter((v) => v.visibleAt <= now).at(-1)?.subscription;
      if (shown?.ownerId === ownerId) listed.push(structuredClone(shown));
    }
    return listed;
  }

  async save(subscription: WebhookSubscription, expectedVersion: number | undefined): Promise<boolean> {
    const k = key(subscription.ownerId, subscription.id);
    if (this.#items.get(k)?.version !== expectedVersion) return false;
    this.#items.set(k, structuredClone(subscription));
    this.#index(k, structuredClone(subscription));
    return true;
  }

  async delete(ownerId: string, id: string, expectedVersion: number): Promise<boolean> {
    const k = key(ownerId, id);
    if (this.#items.get(k)?.version !== expectedVersion) return false;
    this.#index(k, undefined);
    return this.#items.delete(k);
  }

  #index(k: string, subscription: WebhookSubscription | undefined): void {
    const versions = this.#indexed.get(k) ?? [];
    versions.push({ visibleAt: Date.now() + this.#indexLagMs, subscription });
    // Only the latest write already shown and the ones still on their way matter.
    const now = Date.now();
    const firstPending = versions.findIndex((v) => v.visibleAt > now);
    const keepFrom = Math.max(0, (firstPending === -1 ? versions.length : firstPending) - 1);
    this.#indexed.set(k, versions.slice(keepFrom));
  }

  readonly #slots = new Map<string, SubscriptionSlots>();

  async getSlots(ownerId: string): Promise<SubscriptionSlots> {
    return structuredClone(this.#slots.get(ownerId) ?? { held: {}, version: 0 });
  }

  async saveSlots(ownerId: string, slots: SubscriptionSlots, expectedVersion: number): Promise<boolean> {
    if ((this.#slots.get(ownerId)?.version ?? 0) !== expectedVersion) return false;
    this.#slots.set(ownerId, structuredClone(slots));
    return true;
  }
}

function key(ownerId: string, id: string): string {
  return `${ownerId}\n${id}`;
}
