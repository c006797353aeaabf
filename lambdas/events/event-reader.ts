/**
 * Reading one subscription's events from the log, the way every delivery mode needs it:
 * "`null` means start from now", replay from a cursor, "`maxAgeMs` ... the server begins
 * replay from whichever is later: the supplied `cursor`, or `now − maxAgeMs`", and
 * `truncated: true` whenever delivery starts later than the cursor (past retention, or past
 * `maxAgeMs`). A read goes no further than a settled horizon a little before now: an entry
 * whose write is still landing (or, in DynamoDB, still reaching the index) is read on the
 * next pass instead of being skipped for good.
 */
import { streamOf, timeOfPosition, timePosition, type EventEntry, type EventLog } from './event-log.ts';

export interface ReadSettings {
  /** How long the log keeps an entry. */
  readonly retentionMs: number;
  /** How far behind now a read stops (index lag, writes in flight). */
  readonly settleMs: number;
}

export interface SubscriptionRead {
  readonly ownerId: string;
  readonly name: string;
  /** The operation of a per-operation event type (its stream). */
  readonly operationId?: string;
  /** The subscription's own filter over the stream's entries. */
  readonly match: (entry: EventEntry) => boolean;
  /** A position from a cursor, or `null` for "now". */
  readonly cursor: string | null;
  readonly maxAgeMs?: number;
  readonly maxEvents: number;
}

export interface ReadOutcome {
  readonly entries: EventEntry[];
  /** The position after what was read: the next cursor. */
  readonly position: string;
  readonly truncated: boolean;
  readonly hasMore: boolean;
}

/** Where delivery starts for a cursor, and whether that skips anything (see the file comment). */
export function startOf(cursor: string | null, maxAgeMs: number | undefined, settings: ReadSettings, nowMs: number): { position: string; truncated: boolean } {
  if (cursor === null) return { position: horizonAt(settings, nowMs), truncated: false };
  // "maxAgeMs is ignored when cursor is null"; otherwise retention and maxAgeMs set the floor.
  const floorMs = Math.max(nowMs - settings.retentionMs, maxAgeMs === undefined ? -Infinity : nowMs - maxAgeMs);
  const at = timeOfPosition(cursor) ?? 0;
  return at < floorMs ? { position: timePosition(floorMs), truncated: true } : { position: cursor, truncated: false };
}

/** The settled horizon at `nowMs`: reads stop there, and "now" cursors point there. */
export function horizonAt(settings: ReadSettings, nowMs: number): string {
  return timePosition(nowMs - settings.settleMs);
}

/** One read (one query) of a subscription's events after its cursor. */
export async function readEvents(log: EventLog, request: SubscriptionRead, settings: ReadSettings, nowMs: number): Promise<ReadOutcome> {
  const start = startOf(request.cursor, request.maxAgeMs, settings, nowMs);
  const horizon = horizonAt(settings, nowMs);
  if (request.cursor === null || start.position >= horizon) {
    // Never move a cursor backwards: one from ahead of the horizon stays where it is.
    return { entries: [], position: laterOf(start.position, horizon), truncated: start.truncated, hasMore: false };
  }
  const stream = streamOf(request.name, request.operationId ?? '');
  const page = await log.read(request.ownerId, stream, { after: start.position, through: horizon, limit: request.maxEvents });
  const entries = page.entries.filter((entry) => entry.name === request.name && request.match(entry));
  return {
    entries,
    // Past the page, the next read goes on from the last entry read; otherwise everything up to the horizon was seen.
    position: page.more ? page.reached : horizon,
    truncated: start.truncated,
    hasMore: page.more,
  };
}

/** The later of two positions (they sort as strings). */
function laterOf(a: string, b: string): string {
  return a < b ? b : a;
}
