/**
 * Wiring that cannot be wrong (issue 47, scenario 8): a shared event log without its handover
 * marks would skip the second fan-out of a redelivered write silently. The options' type
 * requires the two together, and a value that slips past the type (untyped config) stops the
 * app at startup instead of running with the gap.
 */
import { IN_PROCESS_EVENTS } from '../../lambdas/mcp/events/in-process-events.ts';
import { describe, expect, it, vi } from 'vitest';
import type { EventLog } from '../../lambdas/events/event-log.ts';
import { InMemoryEventHandover } from '../../lambdas/events/in-memory-event-handover.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { createAppEvents, type EventsAppOptions } from '../../lambdas/mcp/events/app-events.ts';

const context = { logger: { error: vi.fn(), warn: vi.fn() }, secretKey: async () => new Uint8Array(32).fill(9), local: false };

/** A log as a deployment passes one: shared between processes, not the in-memory one. */
function sharedLog(): EventLog {
  const inner = new InMemoryEventLog();
  return { append: (entry) => inner.append(entry), read: (...args) => inner.read(...args), get: (...args) => inner.get(...args) };
}

describe('createAppEvents wiring', () => {
  it('a shared event log given without its handover marks is a type error', () => {
    const typed = (): EventsAppOptions =>
      // @ts-expect-error a shared log needs its handover marks beside it
      ({ log: sharedLog() });
    expect(typeof typed).toBe('function');
  });

  it('a shared event log given without its handover marks (untyped config) stops the app at startup, naming what is missing', () => {
    const untyped = JSON.parse('{}') as Record<string, unknown>;
    untyped.log = sharedLog();
    expect(() => createAppEvents(untyped as EventsAppOptions, context)).toThrow(/handover/);
  });

  it('a shared log with its handover marks, an in-memory log alone (one process: marks in memory), and no log at all are all accepted', () => {
    expect(createAppEvents({ log: sharedLog(), handover: new InMemoryEventHandover() }, context).settings.enabled).toBe(true);
    expect(createAppEvents({ log: new InMemoryEventLog() }, { ...context, inProcess: IN_PROCESS_EVENTS }).settings.enabled).toBe(true);
    expect(createAppEvents({}, context).settings.enabled).toBe(false);
  });
});
