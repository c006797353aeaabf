import { describe, expect, it } from 'vitest';
import { createLocalEventBus } from '../../local/events/event-bus.ts';

interface TestEvent {
  id: string;
  detail: { input: string };
}

function recordingLogger() {
  const lines: string[] = [];
  return { lines, logger: { warn: (...args: unknown[]) => lines.push(args.join(' ')), error: (...args: unknown[]) => lines.push(args.join(' ')) } };
}

const event = (id: string): TestEvent => ({ id, detail: { input: '{"secret":"tool-argument"}' } });

describe('local event bus', () => {
  it('delivers asynchronously: publish returns before the handler runs', async () => {
    const seen: string[] = [];
    const bus = createLocalEventBus<TestEvent>(async (e) => {
      seen.push(e.id);
    });
    bus.publish(event('a'));
    expect(seen).toEqual([]);
    await bus.drain();
    expect(seen).toEqual(['a']);
  });

  it('retries a throwing handler with backoff until it succeeds (at-least-once)', async () => {
    const { lines, logger } = recordingLogger();
    let calls = 0;
    const bus = createLocalEventBus<TestEvent>(
      async () => {
        calls++;
        if (calls < 3) throw new Error('status-sync unavailable');
      },
      { baseDelayMs: 5, logger },
    );
    bus.publish(event('evt-1'));
    await bus.drain();
    expect(calls).toBe(3);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('evt-1');
    expect(lines[0]).toContain('status-sync unavailable');
  });

  it('drops an event after the last attempt, logging its id and error but never its data', async () => {
    const { lines, logger } = recordingLogger();
    let calls = 0;
    const bus = createLocalEventBus<TestEvent>(
      async () => {
        calls++;
        throw new Error('still down');
      },
      { maxAttempts: 3, baseDelayMs: 1, logger },
    );
    bus.publish(event('evt-2'));
    await bus.drain();
    expect(calls).toBe(3);
    const dropped = lines.at(-1)!;
    expect(dropped).toMatch(/dropped event evt-2 after 3 attempts/);
    expect(dropped).toContain('still down');
    expect(lines.join('\n')).not.toContain('tool-argument');
  });

  it('keeps delivering other events while one is being retried', async () => {
    const delivered: string[] = [];
    let failedOnce = false;
    const bus = createLocalEventBus<TestEvent>(
      async (e) => {
        if (e.id === 'slow' && !failedOnce) {
          failedOnce = true;
          throw new Error('transient');
        }
        delivered.push(e.id);
      },
      { baseDelayMs: 50, logger: recordingLogger().logger },
    );
    bus.publish(event('slow'));
    bus.publish(event('fast'));
    await bus.drain();
    expect(delivered).toEqual(['fast', 'slow']);
  });

  it('with a pattern, delivers only the events that match it, as an EventBridge rule invokes its target', async () => {
    const delivered: string[] = [];
    const bus = createLocalEventBus<TestEvent & { detail: { status: string } }>(async (e) => void delivered.push(e.id), {
      pattern: { detail: { status: ['RUNNING', 'SUCCEEDED'] } },
    });
    for (const [id, status] of [
      ['running', 'RUNNING'],
      ['redrive', 'PENDING_REDRIVE'],
      ['succeeded', 'SUCCEEDED'],
    ]) {
      bus.publish({ id: id!, detail: { input: '{}', status: status! } });
    }
    await bus.drain();
    expect(delivered).toEqual(['running', 'succeeded']);
  });

  it('refuses, when created, a pattern it could not apply the way EventBridge does', () => {
    expect(() => createLocalEventBus(async () => {}, { pattern: { detail: { status: [{ 'anything-but': ['RUNNING'] }] } } })).toThrow(/content filter/);
  });

  it('close() drains pending deliveries, then drops (and logs) later events', async () => {
    const { lines, logger } = recordingLogger();
    const delivered: string[] = [];
    const bus = createLocalEventBus<TestEvent>(async (e) => void delivered.push(e.id), { logger });
    bus.publish(event('before'));
    await bus.close();
    bus.publish(event('after'));
    await bus.drain();
    expect(delivered).toEqual(['before']);
    expect(lines.join('\n')).toContain('after');
  });
});
