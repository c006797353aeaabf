/**
 * The context object a retried state sees on the local interpreter, as Step Functions gives
 * it: a retry is no new entry into the state, so every attempt reads the EnteredTime of the
 * first, and only RetryCount grows. The request-input worker relies on it to find, in a
 * Parallel branch or a Map iteration, the question the failed attempt stored.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runDefinition } from './jsonata-harness.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('the context object of a retried state', () => {
  it('every attempt of a retried state reads the EnteredTime it was entered at, with its RetryCount', async () => {
    // Only Date is faked: the first attempt moves the clock a minute on, so an attempt that read
    // a fresh entry time would show it; the retry's one-second interval still passes for real.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-12-06T20:00:00.000Z') });
    const seen: unknown[] = [];
    const probe = async (event: unknown) => {
      seen.push(event);
      if (seen.length === 1) {
        vi.setSystemTime(Date.now() + 60_000);
        throw Object.assign(new Error('try again'), { name: 'Busy' });
      }
      return { ok: true };
    };
    const { outcome } = await runDefinition(
      {
        StartAt: 'Inner',
        States: {
          Inner: {
            Type: 'Map',
            ItemsPath: '$.items',
            ItemProcessor: {
              StartAt: 'Probe',
              States: {
                Probe: {
                  Type: 'Task',
                  Resource: '${Worker_probe}',
                  Parameters: { 'entered.$': '$$.State.EnteredTime', 'attempt.$': '$$.State.RetryCount', 'state.$': '$$.State.Name' },
                  Retry: [{ ErrorEquals: ['Busy'], IntervalSeconds: 1, MaxAttempts: 1 }],
                  End: true,
                },
              },
            },
            End: true,
          },
        },
      },
      { items: [1] },
      { workers: { probe } },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: [{ ok: true }] });
    expect(seen).toEqual([
      { entered: '2026-12-06T20:00:00.000Z', attempt: 0, state: 'Probe' },
      { entered: '2026-12-06T20:00:00.000Z', attempt: 1, state: 'Probe' },
    ]);
  });
});
