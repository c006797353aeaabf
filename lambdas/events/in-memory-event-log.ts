/**
 * The event log in memory, for unit tests: the same contract as the DynamoDB adapter. With
 * `indexLagMs`, stream reads lag behind appends by that long (real time), as DynamoDB's owner
 * index may; `get` reads the item itself and never lags.
 */
import { systemClock, type Clock } from '../operations/ports.ts';
import { isExpired, positionOf, type AppendOutcome, type EventEntry, type EventLog, type StreamPage, type StreamRange } from './event-log.ts';

export class InMemoryEventLog implements EventLog {
  readonly #entries = new Map<string, { entry: EventEntry; indexedAt: number }>();
  readonly indexLagMs: number;

  constructor(
    private readonly clock: Clock = systemClock,
    options: { readonly indexLagMs?: number } = {},
  ) {
    this.indexLagMs = options.indexLagMs ?? 0;
  }

  /** A write here lands the moment it is made, so the entry keeps the place its caller took for it. */
  async append(entry: EventEntry): Promise<AppendOutcome> {
    const key = `${entry.ownerId}\n${entry.eventId}`;
    const held = this.#entries.get(key);
    if (held) return { created: false, entry: structuredClone(held.entry) };
    this.#entries.set(key, { entry: structuredClone(entry), indexedAt: Date.now() + this.indexLagMs });
    return { created: true, entry: structuredClone(entry) };
  }

  async read(ownerId: string, stream: string, range: StreamRange): Promise<StreamPage> {
    const indexNow = Date.now();
    const inRange = [...this.#entries.values()]
      .filter(({ entry, indexedAt }) => entry.ownerId === ownerId && entry.stream === stream && indexedAt <= indexNow)
      .map(({ entry }) => ({ entry, position: positionOf(entry) }))
      .filter(({ position }) => position > range.after && position <= range.through)
      .sort((a, b) => (a.position < b.position ? -1 : 1));
    const page = inRange.slice(0, range.limit);
    const now = this.clock.now();
    return {
      entries: page.filter(({ entry }) => !isExpired(entry, now)).map(({ entry }) => structuredClone(entry)),
      reached: page.at(-1)?.position ?? range.after,
      more: inRange.length > range.limit,
    };
  }

  async get(ownerId: string, eventId: string): Promise<EventEntry | undefined> {
    const held = this.#entries.get(`${ownerId}\n${eventId}`);
    return held && !isExpired(held.entry, this.clock.now()) ? structuredClone(held.entry) : undefined;
  }
}
