/**
 * The per-principal event log of the Events extension (SEP-3415): every occurrence about a
 * principal's operations, kept in time order for a retention period. It is the one source of
 * `events/poll`, `events/stream` and webhook delivery, so an occurrence carries the same
 * `eventId` in every mode. Entries are grouped in streams (an event type, or for a
 * per-operation type that type and the operation), and a position orders a stream.
 */

import type { TraceCarrier } from '../observability/trace-context.ts';

/** One occurrence as the log keeps it. */
export interface EventEntry {
  readonly ownerId: string;
  /** Stable: the same occurrence appended twice is one entry (see `eventIdFor`). */
  readonly eventId: string;
  /** The event type's name (`operation.finished`, ...). */
  readonly name: string;
  /** The stream it belongs to within its owner's log (see `streamOf`). */
  readonly stream: string;
  /** When it occurred, epoch milliseconds: the occurrence's `timestamp`. */
  readonly at: number;
  /**
   * When it was appended, epoch milliseconds: its place in the log. An occurrence is often
   * appended well after it happened (status sync hears of an execution's end seconds later),
   * so the log is ordered by this, never by `at`: a cursor past it cannot skip a late arrival.
   * The log may place an entry later than the `loggedAt` it is given, never earlier: the
   * entry `append` returns carries its place.
   */
  readonly loggedAt: number;
  /** Fields subscriptions filter on. */
  readonly operationId: string;
  readonly tool: string;
  /** The payload, as `payloadSchema` describes it. */
  readonly data: Record<string, unknown>;
  /** Epoch seconds after which the entry is gone, whether or not the store has deleted it yet. */
  readonly expiresAt: number;
  /** The W3C context of the span that appended it, in its operation's trace: deliveries are its children, and `_meta` carries it. */
  readonly trace?: TraceCarrier;
}

/** A read of one stream: the entries after one position, up to another. */
export interface StreamRange {
  /** Exclusive lower bound (a position or a time position). */
  readonly after: string;
  /** Inclusive upper bound. */
  readonly through: string;
  /** The most entries returned. */
  readonly limit: number;
}

export interface StreamPage {
  /** In position order, expired ones left out. */
  readonly entries: EventEntry[];
  /** The position the read reached: past it nothing was read yet (`after` when nothing was). */
  readonly reached: string;
  /** Whether entries may remain within the range past `reached`. */
  readonly more: boolean;
}

/** What an append did: whether it wrote the entry, and the entry as the log holds it. */
export interface AppendOutcome {
  readonly created: boolean;
  /** With the place the log gave it (`loggedAt`, and `expiresAt` as far after it); when not created, the entry already held. */
  readonly entry: EventEntry;
}

/**
 * The longest one write of an entry may take from the moment its position is taken: an
 * adapter whose writes can be slow takes the position at each attempt and gives up an
 * attempt still unanswered this long after, so no write lands further behind its position.
 */
export const APPEND_ATTEMPT_MS = 2_000;

/** What a reader allows beyond that for an index to show a landed write (DynamoDB's GSIs: well under a second) and for clocks. */
export const INDEX_LAG_MS = 1_000;

/** The log port: one DynamoDB adapter, one in-memory version for tests. */
export interface EventLog {
  /**
   * The longest a stream read may miss an entry after its append returned (DynamoDB's GSIs,
   * eventually consistent); absent: `INDEX_LAG_MS`. What must not miss an entry reads again
   * once this has passed.
   */
  readonly indexLagMs?: number;
  /** Conditional put: an `eventId` already in the log is left as it is (`created: false`). */
  append(entry: EventEntry): Promise<AppendOutcome>;
  /**
   * One read of a stream, in position order: at most `limit` entries, fewer when the store
   * cuts a page short (DynamoDB's 1 MB), and then `more` says so.
   */
  read(ownerId: string, stream: string, range: StreamRange): Promise<StreamPage>;
  /** One entry by id; `undefined` when absent or expired. */
  get(ownerId: string, eventId: string): Promise<EventEntry | undefined>;
}

/** Event types whose occurrences are read per operation: their stream names the operation too. */
const PER_OPERATION = new Set(['operation.progress']);

/** The stream an occurrence of `name` about `operationId` belongs to. */
export function streamOf(name: string, operationId: string): string {
  return PER_OPERATION.has(name) ? `${name}#${operationId}` : name;
}

/** Whether the event type is read per operation (its `operationId` argument is required). */
export function isPerOperation(name: string): boolean {
  return PER_OPERATION.has(name);
}

const TIME_DIGITS = 15;

/**
 * An entry's position: the time it was appended, zero-padded so positions sort as strings, then its id. A
 * time position (`timePosition`) ends at the `#`, which sorts before every id character, so
 * it falls just before every entry of that millisecond.
 */
export function positionOf(entry: Pick<EventEntry, 'loggedAt' | 'eventId'>): string {
  return `${timePosition(entry.loggedAt)}${entry.eventId}`;
}

/** The position just before the entries of millisecond `ms`. */
export function timePosition(ms: number): string {
  const clamped = Math.max(0, Math.floor(ms));
  return `${String(clamped).padStart(TIME_DIGITS, '0')}#`;
}

/** The millisecond a position names, or `undefined` when it is not one this log writes. */
export function timeOfPosition(position: string): number | undefined {
  const match = /^(\d{15})#[A-Za-z0-9_-]{0,64}$/.exec(position);
  if (!match?.[1]) return undefined;
  const ms = Number(match[1]);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** `entry` placed at `ms`, never before its own `loggedAt`, and kept as long after its place as before. */
export function placeAt(entry: EventEntry, ms: number): EventEntry {
  const loggedAt = Math.max(entry.loggedAt, Math.floor(ms));
  return { ...entry, loggedAt, expiresAt: entry.expiresAt + Math.ceil((loggedAt - entry.loggedAt) / 1000) };
}

/** Whether an entry is past its retention at `nowMs`. */
export function isExpired(entry: Pick<EventEntry, 'expiresAt'>, nowMs: number): boolean {
  return entry.expiresAt * 1000 <= nowMs;
}
