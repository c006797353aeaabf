/**
 * What a per-operation subscription is owed when its operation ends: the entries of its stream
 * it matches, from where it started up to now, that its record does not show settled
 * (delivered or given up on). Whoever hands an end over (the fan-out, a subscribe that finds the
 * operation ended) reads them, since it may read the owner index, and puts their ids on the end
 * job; the delivery function, whose role reads event items by key only, sends those still not
 * settled before `terminated`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../operations/ports.ts';
import { matchesFilter } from './event-filter.ts';
import { INDEX_LAG_MS, streamOf, timePosition, type EventLog } from './event-log.ts';
import type { WebhookSubscription } from './webhook-subscription.ts';

/** The most ids one end job carries (the latest ones): a job stays a small queue message. */
export const MAX_OWED = 100;
/** The most reads (page cuts) that look for them. */
const OWED_READS = 10;
/** Entries one read returns at most. */
const PAGE = 500;

/**
 * Waits until the log's index shows every entry appended before `loggedAt` (the end's own
 * entry): its lag bound past it. An operation's last report is often logged a moment before
 * its end, and the index may not show it yet.
 */
export async function untilIndexed(log: EventLog, loggedAt: number, clock: Clock): Promise<void> {
  const lagMs = log.indexLagMs ?? INDEX_LAG_MS;
  const wait = Math.min(lagMs, loggedAt + lagMs - clock.now());
  if (wait > 0) await sleep(wait);
}

/** The ids `subscription` is owed at `nowMs`, in log order, the latest `MAX_OWED`. */
export async function owedEvents(
  log: EventLog,
  subscription: Pick<WebhookSubscription, 'ownerId' | 'name' | 'arguments' | 'startPosition' | 'settled'>,
  nowMs: number,
): Promise<string[]> {
  const settled = new Set(subscription.settled ?? []);
  const stream = streamOf(subscription.name, subscription.arguments.operationId ?? '');
  const through = timePosition(nowMs + 1);
  const owed: string[] = [];
  let after = subscription.startPosition;
  for (let read = 0; read < OWED_READS; read++) {
    const page = await log.read(subscription.ownerId, stream, { after, through, limit: PAGE });
    for (const entry of page.entries)
      if (entry.name === subscription.name && matchesFilter(subscription.arguments, entry) && !settled.has(entry.eventId)) owed.push(entry.eventId);
    if (!page.more || page.reached <= after) break;
    after = page.reached;
  }
  return owed.slice(-MAX_OWED);
}
