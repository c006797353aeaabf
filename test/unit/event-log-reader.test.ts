/** Reading one subscription from the event log: cursors, "start from now", replay, maxAgeMs, truncated, hasMore. */
import { describe, expect, it } from 'vitest';
import { decodeEventCursor, encodeEventCursor } from '../../lambdas/events/event-cursor.ts';
import { matchesFilter } from '../../lambdas/events/event-filter.ts';
import { positionOf, streamOf, timePosition, type EventEntry } from '../../lambdas/events/event-log.ts';
import { readEvents, startOf, type SubscriptionRead } from '../../lambdas/events/event-reader.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';

const T0 = 1_760_000_000_000;
const settings = { retentionMs: 24 * 3_600_000, settleMs: 1000 };

function entry(i: number, overrides: Partial<EventEntry> = {}): EventEntry {
  const name = overrides.name ?? 'operation.finished';
  const operationId = overrides.operationId ?? `op-${i}`;
  return {
    ownerId: 'owner-a',
    eventId: `evt_${i}`,
    name,
    stream: streamOf(name, operationId),
    at: T0 + i * 1000,
    operationId,
    tool: i % 2 ? 'odd' : 'even',
    data: { i },
    expiresAt: Math.floor(T0 / 1000) + 86_400,
    ...overrides,
    loggedAt: overrides.loggedAt ?? overrides.at ?? T0 + i * 1000,
  };
}

async function logWith(count: number, now: () => number) {
  const log = new InMemoryEventLog({ now });
  for (let i = 1; i <= count; i++) await log.append(entry(i));
  return log;
}

const request = (overrides: Partial<SubscriptionRead> = {}): SubscriptionRead => ({
  ownerId: 'owner-a',
  name: 'operation.finished',
  match: () => true,
  cursor: timePosition(0),
  maxEvents: 50,
  ...overrides,
});

describe('event cursors', () => {
  it('round-trip a position, and refuse anything this server did not issue', () => {
    const position = positionOf(entry(3));
    expect(decodeEventCursor(encodeEventCursor(position))).toBe(position);
    for (const forged of [
      '',
      'abc',
      encodeEventCursor('not a position'),
      Buffer.from('{"v":2,"p":"000000000000001#"}').toString('base64url'),
      'x'.repeat(600),
    ]) {
      expect(decodeEventCursor(forged), forged).toBeUndefined();
    }
  });
});

describe('readEvents', () => {
  const now = T0 + 100_000;

  it('"null means start from now": no events, and a cursor at the settled horizon', async () => {
    const log = await logWith(3, () => now);
    const read = await readEvents(log, request({ cursor: null }), settings, now);
    expect(read).toEqual({ entries: [], position: timePosition(now - 1000), truncated: false, hasMore: false });
  });

  it('replays from a cursor, in order, and the returned cursor continues after the last event', async () => {
    const log = await logWith(3, () => now);
    const first = await readEvents(log, request({ cursor: positionOf(entry(1)) }), settings, now);
    expect(first.entries.map((e) => e.eventId)).toEqual(['evt_2', 'evt_3']);
    expect(first.truncated).toBe(false);
    await log.append(entry(4, { at: now + 1000 }));
    const second = await readEvents(log, request({ cursor: first.position }), settings, now + 5000);
    expect(second.entries.map((e) => e.eventId)).toEqual(['evt_4']);
  });

  it('stops at maxEvents with hasMore and an intermediate cursor, then drains the rest', async () => {
    const log = await logWith(5, () => now);
    const first = await readEvents(log, request({ maxEvents: 2 }), settings, now);
    expect(first.entries.map((e) => e.eventId)).toEqual(['evt_1', 'evt_2']);
    expect(first.hasMore).toBe(true);
    const second = await readEvents(log, request({ cursor: first.position, maxEvents: 10 }), settings, now);
    expect(second.entries.map((e) => e.eventId)).toEqual(['evt_3', 'evt_4', 'evt_5']);
    expect(second.hasMore).toBe(false);
  });

  it('reads nothing younger than the settled horizon, and delivers it on the next read', async () => {
    const log = await logWith(0, () => now);
    await log.append(entry(1, { at: now - 200 }));
    const early = await readEvents(log, request({ cursor: timePosition(now - 60_000) }), settings, now);
    expect(early.entries).toEqual([]);
    const later = await readEvents(log, request({ cursor: early.position }), settings, now + 2000);
    expect(later.entries.map((e) => e.eventId)).toEqual(['evt_1']);
  });

  it('"truncated: true" with a fresh cursor when the cursor is older than retention', async () => {
    const log = await logWith(2, () => now);
    const stale = timePosition(now - settings.retentionMs - 60_000);
    const read = await readEvents(log, request({ cursor: stale }), settings, now);
    expect(read.truncated).toBe(true);
    expect(read.entries.map((e) => e.eventId)).toEqual(['evt_1', 'evt_2']);
  });

  it('"begins replay from whichever is later: the supplied cursor, or now − maxAgeMs", truncated when the floor passed the cursor', async () => {
    const log = await logWith(5, () => now);
    // Events 1..5 are at T0+1s..T0+5s; now is T0+100s; a floor of 97.5 s back keeps 3, 4 and 5.
    const read = await readEvents(log, request({ cursor: positionOf(entry(1)), maxAgeMs: 97_500 }), settings, now);
    expect(read.entries.map((e) => e.eventId)).toEqual(['evt_3', 'evt_4', 'evt_5']);
    expect(read.truncated).toBe(true);
    expect(startOf(null, 1, settings, now).truncated).toBe(false);
  });

  it("applies the subscription filter, and reads a per-operation type from its operation's stream", async () => {
    const log = await logWith(4, () => now);
    const odd = await readEvents(log, request({ match: (e) => matchesFilter({ tool: 'odd' }, e) }), settings, now);
    expect(odd.entries.map((e) => e.eventId)).toEqual(['evt_1', 'evt_3']);
    await log.append(entry(10, { name: 'operation.progress', operationId: 'op-x' }));
    await log.append(entry(11, { name: 'operation.progress', operationId: 'op-y' }));
    const progress = await readEvents(log, request({ name: 'operation.progress', operationId: 'op-x' }), settings, T0 + 200_000);
    expect(progress.entries.map((e) => e.eventId)).toEqual(['evt_10']);
  });

  it('an end heard of late (status sync lags the execution) still reaches a reader whose cursor passed the time it happened', async () => {
    const log = await logWith(0, () => now);
    const first = await readEvents(log, request({ cursor: timePosition(now - 60_000) }), settings, now);
    // The execution stopped 30 s ago; status sync appends its end only now.
    await log.append(entry(1, { at: now - 30_000, loggedAt: now + 500 }));
    const later = await readEvents(log, request({ cursor: first.position }), settings, now + 2000);
    expect(later.entries.map((e) => e.eventId)).toEqual(['evt_1']);
    expect(later.entries[0]?.at).toBe(now - 30_000);
  });

  it('never moves a cursor backwards', async () => {
    const log = await logWith(0, () => now);
    const ahead = timePosition(now + 60_000);
    expect((await readEvents(log, request({ cursor: ahead }), settings, now)).position).toBe(ahead);
  });
});
