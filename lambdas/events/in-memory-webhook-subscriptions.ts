/** Webhook subscriptions in memory: for unit tests, and for a single-process server (the local stack's default). */
import type { SubscriptionSlots, WebhookSubscription, WebhookSubscriptionStore } from './webhook-subscription.ts';

export class InMemoryWebhookSubscriptions implements WebhookSubscriptionStore {
  readonly #items = new Map<string, WebhookSubscription>();

  async get(ownerId: string, id: string): Promise<WebhookSubscription | undefined> {
    const found = this.#items.get(key(ownerId, id));
    return found && structuredClone(found);
  }

  async listByOwner(ownerId: string): Promise<WebhookSubscription[]> {
    return [...this.#items.values()].filter((s) => s.ownerId === ownerId).map((s) => structuredClone(s));
  }

  async save(subscription: WebhookSubscription, expectedVersion: number | undefined): Promise<boolean> {
    const k = key(subscription.ownerId, subscription.id);
    if (this.#items.get(k)?.version !== expectedVersion) return false;
    this.#items.set(k, structuredClone(subscription));
    return true;
  }

  async delete(ownerId: string, id: string, expectedVersion: number): Promise<boolean> {
    const k = key(ownerId, id);
    if (this.#items.get(k)?.version !== expectedVersion) return false;
    return this.#items.delete(k);
  }

  readonly #slots = new Map<string, SubscriptionSlots>();

  async getSlots(ownerId: string): Promise<SubscriptionSlots> {
    return structuredClone(this.#slots.get(ownerId) ?? { held: {}, version: 0 });
  }

  /** One copy in memory: an eventual read is the consistent one. */
  getSlotsEventually(ownerId: string): Promise<SubscriptionSlots> {
    return this.getSlots(ownerId);
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
