/** The EventLog contract, one suite run against every log: in memory and DynamoDB (dynalite). */
import { beforeEach, describe, expect, it } from 'vitest';
import { positionOf, streamOf, timePosition, type EventEntry, type EventLog } from '../../lambdas/events/event-log.ts';

/** A fresh, empty log per test; `now` is what the log takes for the current time (epoch ms). */
export type MakeEventLog = (now: () => number) => Promise<EventLog>;

const T0 = 1_760_000_000_000;

export function entry(overrides: Partial<EventEntry> = {}): EventEntry {
  const name = overrides.name ?? 'operation.finished';
  const operationId = overrides.operationId ?? 'op-1';
  return {
    ownerId: 'owner-a',
    eventId: 'evt_1',
    name,
    stream: streamOf(name, operationId),
    at: T0,
    operationId,
    tool: 'slow-echo',
    data: { status: 'completed', nested: { a: [1, null, ''] }, empty: {} },
    expiresAt: Math.floor(T0 / 1000) + 86_400,
    ...overrides,
    loggedAt: overrides.loggedAt ?? overrides.at ?? T0,
  };
}

export function describeEventLogContract(name: string, makeLog: MakeEventLog): void {
  describe(`EventLog contract: ${name}`, () => {
    let now = T0 + 10_000;
    let log: EventLog;
    beforeEach(async () => {
      now = T0 + 10_000;
      log = await makeLog(() => now);
    });
    /** Appends `e` at the time it says it is logged (a log may take its own clock for the place), then reads at T0 + 10 s. */
    const append = async (e: EventEntry) => {
      now = e.loggedAt;
      try {
        return await log.append(e);
      } finally {
        now = T0 + 10_000;
      }
    };
    const all = { after: timePosition(0), through: timePosition(T0 + 60_000), limit: 50 };

    it('appends an occurrence once: the same eventId again is left as it is', async () => {
      expect(await append(entry())).toEqual({ created: true, entry: entry() });
      expect(await append(entry({ data: { other: true } }))).toEqual({ created: false, entry: entry() });
      expect(await log.get('owner-a', 'evt_1')).toEqual(entry());
    });

    it("keeps an occurrence's trace context, by key and in a stream read", async () => {
      const trace = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=opaque' };
      await append(entry({ eventId: 'evt_traced', trace }));
      expect((await log.get('owner-a', 'evt_traced'))?.trace).toEqual(trace);
      expect((await log.read('owner-a', 'operation.finished', all)).entries.map((e) => e.trace)).toEqual([trace]);
    });

    it('places an entry no earlier than the loggedAt it is given, keeps its retention span, and returns it as held', async () => {
      // The log's clock is past the given place: an adapter that takes its own may place it later, never earlier.
      const given = entry({ eventId: 'evt_placed' });
      const { entry: placed } = await log.append(given);
      expect(placed.loggedAt).toBeGreaterThanOrEqual(given.loggedAt);
      expect(placed.loggedAt).toBeLessThanOrEqual(now);
      expect(placed.expiresAt * 1000 - placed.loggedAt).toBeGreaterThanOrEqual(given.expiresAt * 1000 - given.loggedAt);
      expect(await log.get('owner-a', 'evt_placed')).toEqual(placed);
      const page = await log.read('owner-a', 'operation.finished', all);
      expect(page.entries).toEqual([placed]);
      expect(page.reached).toBe(positionOf(placed));
    });

    it('reads a stream in time order, whatever the order of the appends, and keeps payloads exactly', async () => {
      await append(entry({ eventId: 'evt_c', at: T0 + 3 }));
      await append(entry({ eventId: 'evt_a', at: T0 + 1 }));
      await append(entry({ eventId: 'evt_b', at: T0 + 2 }));
      const page = await log.read('owner-a', 'operation.finished', all);
      expect(page.entries.map((e) => e.eventId)).toEqual(['evt_a', 'evt_b', 'evt_c']);
      expect(page.entries[0]?.data).toEqual(entry().data);
      expect(page.more).toBe(false);
    });

    it('keeps owners and streams apart', async () => {
      await append(entry({ eventId: 'evt_a' }));
      await append(entry({ eventId: 'evt_b', ownerId: 'owner-b' }));
      await append(entry({ eventId: 'evt_c', name: 'operation.progress' }));
      expect((await log.read('owner-a', 'operation.finished', all)).entries.map((e) => e.eventId)).toEqual(['evt_a']);
      expect((await log.read('owner-b', 'operation.finished', all)).entries.map((e) => e.eventId)).toEqual(['evt_b']);
      expect((await log.read('owner-a', streamOf('operation.progress', 'op-1'), all)).entries.map((e) => e.eventId)).toEqual(['evt_c']);
      expect(await log.get('owner-b', 'evt_a')).toBeUndefined();
    });

    it('reads after a position, exclusive, through another, inclusive', async () => {
      const nth = (i: number) => entry({ eventId: `evt_${i}`, at: T0 + i });
      for (const i of [1, 2, 3, 4]) await append(nth(i));
      const page = await log.read('owner-a', 'operation.finished', { after: positionOf(nth(1)), through: positionOf(nth(3)), limit: 50 });
      expect(page.entries.map((e) => e.eventId)).toEqual(['evt_2', 'evt_3']);
      expect(page.more).toBe(false);
    });

    it('stops at the limit, says more may follow, and names the position it reached', async () => {
      for (const i of [1, 2, 3, 4, 5]) await append(entry({ eventId: `evt_${i}`, at: T0 + i }));
      const first = await log.read('owner-a', 'operation.finished', { ...all, limit: 2 });
      expect(first.entries.map((e) => e.eventId)).toEqual(['evt_1', 'evt_2']);
      expect(first.more).toBe(true);
      expect(first.reached).toBe(positionOf(entry({ eventId: 'evt_2', at: T0 + 2 })));
      const second = await log.read('owner-a', 'operation.finished', { ...all, after: first.reached, limit: 3 });
      expect(second.entries.map((e) => e.eventId)).toEqual(['evt_3', 'evt_4', 'evt_5']);
    });

    it('leaves out entries past their expiresAt, before the store deletes them', async () => {
      await append(entry({ eventId: 'evt_old', expiresAt: Math.floor(T0 / 1000) + 5 }));
      await append(entry({ eventId: 'evt_new', at: T0 + 1 }));
      expect((await log.read('owner-a', 'operation.finished', all)).entries.map((e) => e.eventId)).toEqual(['evt_new']);
      expect(await log.get('owner-a', 'evt_old')).toBeUndefined();
    });

    it('answers an empty range without entries', async () => {
      await append(entry());
      const page = await log.read('owner-a', 'operation.finished', { after: timePosition(T0 + 5), through: timePosition(T0 + 5), limit: 5 });
      expect(page).toEqual({ entries: [], reached: timePosition(T0 + 5), more: false });
    });
  });
}
