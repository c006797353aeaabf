/**
 * The per-principal cap on webhook subscriptions as a conditional counter: each live
 * subscription holds one of its owner's slots (`SubscriptionSlots`), claimed with a
 * compare-and-set before the endpoint is verified, so parallel subscribes cannot all pass a
 * check made before any of them was written. A slot names the end of its subscription's grant,
 * so a lapsed or abandoned one frees itself: every write drops the slots past their end.
 */
import type { SubscriptionSlots, WebhookSubscriptionStore } from './webhook-subscription.ts';

/**
 * Compare-and-set attempts of one claim: parallel subscribes of one owner each win one round,
 * and a claim is refused without a write once the slots are full, so the cap bounds the rounds.
 */
const SLOT_ATTEMPTS = 64;

export type SlotClaim = 'claimed' | 'refused';

/**
 * Holds a slot for subscription `id` until `until` (epoch ms, `null`: no expiry); one it
 * already holds is extended. `force` claims past the cap (a refresh of a subscription that is
 * live already: it was counted when it was made).
 */
export async function claimSlot(
  store: WebhookSubscriptionStore,
  request: { ownerId: string; id: string; until: number | null; max: number; nowMs: number; force?: boolean },
): Promise<SlotClaim> {
  for (let attempt = 0; attempt < SLOT_ATTEMPTS; attempt++) {
    const slots = await store.getSlots(request.ownerId);
    const held = liveSlots(slots, request.nowMs);
    if (!(request.id in held) && !request.force && Object.keys(held).length >= request.max) return 'refused';
    held[request.id] = request.until;
    if (await store.saveSlots(request.ownerId, { held, version: slots.version + 1 }, slots.version)) return 'claimed';
    await backOff(attempt);
  }
  throw new Error('The subscription slots kept changing while a slot was claimed');
}

/** Gives subscription `id`'s slot back (its subscription is deleted). */
export async function releaseSlot(store: WebhookSubscriptionStore, ownerId: string, id: string, nowMs: number): Promise<void> {
  for (let attempt = 0; attempt < SLOT_ATTEMPTS; attempt++) {
    const slots = await store.getSlots(ownerId);
    if (!(id in slots.held)) return;
    const held = liveSlots(slots, nowMs);
    delete held[id];
    if (await store.saveSlots(ownerId, { held, version: slots.version + 1 }, slots.version)) return;
    await backOff(attempt);
  }
  throw new Error('The subscription slots kept changing while a slot was released');
}

/** The slots still held at `nowMs`. */
function liveSlots(slots: SubscriptionSlots, nowMs: number): Record<string, number | null> {
  return Object.fromEntries(Object.entries(slots.held).filter(([, until]) => until === null || until > nowMs));
}

/** A short random pause, so the writers of a contended item do not all collide again at once. */
function backOff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 + attempt * 2)));
}
