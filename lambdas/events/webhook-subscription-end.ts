/**
 * The end of a webhook subscription the server ends ("The server MUST terminate the event
 * stream when the task reaches a terminal status", Task Event Sources): the record is marked
 * ended, retried on a version conflict (delivery writes its health to the same record), and,
 * once its `terminated` envelope is sent or given up on, deleted and its slot given back.
 */
import { releaseSlot } from './subscription-slots.ts';
import type { SubscriptionEnding, WebhookSubscription, WebhookSubscriptionStore } from './webhook-subscription.ts';
import { controlMessageId } from './webhooks/webhook-signature.ts';

const CAS_ATTEMPTS = 8;

/** Marks `subscription` ended with `ending` at `nowMs`; the record as ended, or `undefined` when it is gone. An ending already set stays. */
export async function markEnded(
  store: WebhookSubscriptionStore,
  subscription: WebhookSubscription,
  ending: SubscriptionEnding,
  nowMs: number,
): Promise<WebhookSubscription | undefined> {
  let current: WebhookSubscription | undefined = subscription;
  for (let attempt = 0; attempt < CAS_ATTEMPTS && current; attempt++) {
    if (current.ending) return current;
    const ended: WebhookSubscription = { ...current, ending, endedAt: nowMs, version: current.version + 1 };
    if (await store.save(ended, current.version)) return ended;
    current = await store.get(subscription.ownerId, subscription.id);
  }
  if (current) throw new Error('The subscription kept changing while it was being ended');
  return undefined;
}

/** Deletes an ended subscription whatever its version has become since (health writes), and gives its slot back. */
export async function deleteEnded(store: WebhookSubscriptionStore, subscription: WebhookSubscription, nowMs: number): Promise<void> {
  let current: WebhookSubscription | undefined = subscription;
  for (let attempt = 0; attempt < CAS_ATTEMPTS && current; attempt++) {
    if (await store.delete(current.ownerId, current.id, current.version)) break;
    current = await store.get(subscription.ownerId, subscription.id);
  }
  await releaseSlot(store, subscription.ownerId, subscription.id, nowMs);
}

/** The `webhook-id` of a subscription's `terminated` envelope: the same on every try, another for another end of the same key. */
export function terminatedMessageId(subscription: WebhookSubscription): string {
  return controlMessageId('terminated', `${subscription.id}\n${subscription.createdAt}\n${subscription.endedAt ?? JSON.stringify(subscription.ending)}`);
}
