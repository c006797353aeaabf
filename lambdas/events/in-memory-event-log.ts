/** The event log in memory, for unit tests: the same contract as the DynamoDB adapter. */
import { systemClock, type Clock } from '../operations/ports.ts';
import { isExpired, positionOf, type AppendOutcome, type EventEntry, type EventLog, type StreamPage, type StreamRange } from './event-log.ts';

export class InMemoryEventLog implements EventLog {
  readonly #entries = new Map<string, EventEntry>();

  constructor(private readonly clock: Clock = systemClock) {}

  /** A write here lands the moment it is made, so the entry keeps the place its caller took for it. */
  async append(entry: EventEntry): Promise<AppendOutcome> {
    const key = `${entry.ownerId}\n${entry.eventId}`;
    const held = this.#entries.get(key);
    if (held) return { created: false, entry: structuredClone(held) };
    this.#entries.set(key, structuredClone(entry));
    return { created: true, entry: structuredClone(entry) };
  }

  async read(ownerId: string, stream: string, range: StreamRange): Promise<StreamPage> {
    const inRange = [...this.#entries.values()]
      .filter((entry) => entry.ownerId === ownerId && entry.stream === stream)
      .map((entry) => ({ entry, position: positionOf(entry) }))
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
    const entry = this.#entries.get(`${ownerId}\n${eventId}`);
    return entry && !isExpired(entry, this.clock.now()) ? structuredClone(entry) : undefined;
  }
}
