/** The record store that feeds the event log: which writes are occurrences, stable ids, and failures that leave the write standing. */
import { describe, expect, it, vi } from 'vitest';
import { timePosition } from '../../lambdas/events/event-log.ts';
import { withLenientEventRecording } from '../../lambdas/events/event-recorder.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { withEventRecording } from '../../lambdas/mcp/events/event-recording.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';

const T0 = 1_760_000_000_000;
const record: OperationRecord = {
  ownerId: 'owner-a',
  token: 'task-1',
  tool: 'analyze_dataset',
  argumentsHash: 'h',
  dialect: 'tasks-2026-07-28',
  status: 'working',
  executionName: 'exec-1',
  createdAt: T0,
  updatedAt: T0,
  keepAliveSeconds: 3600,
  pollIntervalSeconds: 2,
};
const settings = { enabled: true, retentionHours: 24 };
const logger = { error: vi.fn(), warn: vi.fn() };
// Entries are placed by when they are appended (now), whatever time the record's clock says.
const everything = { after: timePosition(0), through: timePosition(9e14), limit: 100 };

async function setUp() {
  const base = new InMemoryRecordStore();
  await base.create(record);
  const log = new InMemoryEventLog({ now: () => T0 + 1000 });
  return { base, log, store: withEventRecording(base, { log, settings, logger }) };
}

describe('withEventRecording', () => {
  it('appends operation.finished once for an end, however often the end is written or tried', async () => {
    const { log, store } = await setUp();
    const outcome = { kind: 'call-tool-result' as const, result: { content: [{ type: 'text', text: '{"count":1}' }], structuredContent: { count: 1 } } };
    await store.transition(record, ['working'], { status: 'completed', outcome, completedAt: T0 + 500, updatedAt: T0 + 500 });
    // A redelivered status event finds the record terminal: the condition fails and nothing more is appended.
    await store.transition(record, ['working'], { status: 'completed', outcome, completedAt: T0 + 600, updatedAt: T0 + 600 });
    const { entries } = await log.read('owner-a', 'operation.finished', everything);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ operationId: 'task-1', at: T0 + 500, data: { status: 'completed', isError: false, result: outcome.result } });
  });

  it('appends one operation.progress per report, numbered, and nothing for a write that is no occurrence', async () => {
    const { log, store } = await setUp();
    await store.transition(record, ['working'], { statusMessage: 'still going', updatedAt: T0 + 1 });
    const report = (seq: number) => ({ kind: 'progress' as const, seq, at: T0 + seq * 10, progress: seq, total: 3 });
    await store.transition(record, ['working'], { reports: [report(1)], updatedAt: T0 + 10 });
    await store.transition(record, ['working'], { reports: [report(1), report(2)], updatedAt: T0 + 20 });
    const { entries } = await log.read('owner-a', 'operation.progress#task-1', everything);
    expect(entries.map((e) => e.data)).toEqual([
      { operationId: 'task-1', tool: 'analyze_dataset', dialect: 'tasks-2026-07-28', seq: 1, kind: 'progress', progress: 1, total: 3 },
      { operationId: 'task-1', tool: 'analyze_dataset', dialect: 'tasks-2026-07-28', seq: 2, kind: 'progress', progress: 2, total: 3 },
    ]);
    expect((await log.read('owner-a', 'operation.finished', everything)).entries).toEqual([]);
  });

  it('a log that fails leaves the status write standing, fails the writer so its event is redelivered, and says so in the log without the payload', async () => {
    const { base, log, store } = await setUp();
    vi.spyOn(log, 'append').mockRejectedValue(new Error('throttled'));
    await expect(store.transition(record, ['working'], { status: 'canceled', completedAt: T0 + 5, updatedAt: T0 + 5 })).rejects.toThrow('throttled');
    expect((await base.get(record))?.status).toBe('canceled');
    expect(logger.error).toHaveBeenCalledWith('event not appended', expect.objectContaining({ name: 'operation.finished' }));
    expect(JSON.stringify(logger.error.mock.calls)).not.toContain('data');
  });

  it("a client's request whose write the log then fails still gets its answer: the failure is logged, and status sync's redelivery records the end", async () => {
    const { base, log, store } = await setUp();
    vi.spyOn(log, 'append').mockRejectedValue(new Error('throttled'));
    const updated = await withLenientEventRecording(() =>
      store.transition(record, ['working'], { status: 'canceled', completedAt: T0 + 5, updatedAt: T0 + 5 }),
    );
    expect(updated?.status).toBe('canceled');
    expect((await base.get(record))?.status).toBe('canceled');
    expect(logger.error).toHaveBeenCalledWith('event not appended', expect.objectContaining({ name: 'operation.finished' }));
  });

  it('leaves the store unchanged when events are turned off', async () => {
    const base = new InMemoryRecordStore();
    expect(withEventRecording(base, { log: new InMemoryEventLog(), settings: { enabled: false, retentionHours: 24 }, logger })).toBe(base);
  });
});
