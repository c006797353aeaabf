/**
 * What a waiting run holds: the local interpreter keeps thousands of executions waiting
 * (the soak keeps 10,000), so a Wait must not cost a Node timer or an EventTarget each,
 * and a stopped run must leave nothing scheduled behind.
 */
import { describe, expect, it } from 'vitest';
import { TimerQueue, timers } from '../../local/stepfunctions/asl-timer-queue.ts';
import { RunStop, sleep } from '../../local/stepfunctions/asl-run-support.ts';
import { interpreterFor, jsonataMachine, RUN_CONTEXT } from './jsonata-harness.ts';

const timeouts = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

describe('waiting runs', () => {
  it('1,000 runs waiting in a Wait state (with a machine TimeoutSeconds) hold one Node timer between them, not one each', async () => {
    const before = timeouts();
    const interpreter = interpreterFor(jsonataMachine({ Sleep: { Type: 'Wait', Seconds: 3600, End: true } }, { TimeoutSeconds: 7200 }));
    const runs = Array.from({ length: 1000 }, () => interpreter.run({}, RUN_CONTEXT, () => undefined));
    try {
      await expect.poll(() => timers.size).toBeGreaterThanOrEqual(2000);
      expect(timeouts() - before).toBeLessThanOrEqual(1);
    } finally {
      for (const run of runs) run.abort();
    }
    expect(await Promise.all(runs.map((run) => run.outcome))).toEqual(runs.map(() => ({ status: 'ABORTED' })));
    // Stopped runs leave nothing due later: no entry, no armed timer keeping the process alive.
    expect(timers.size).toBe(0);
    expect(timeouts()).toBeLessThanOrEqual(before);
  });

  it('a Wait still ends on time (here 1 s scaled by 0.2), and the run goes on to its next state', async () => {
    const definition = jsonataMachine({ Sleep: { Type: 'Wait', Seconds: 1, Next: 'Done' }, Done: { Type: 'Pass', Output: 'woke', End: true } });
    const interpreter = interpreterFor(definition, { waitTimeScale: 0.2 });
    const started = performance.now();
    const run = interpreter.run({}, RUN_CONTEXT, () => undefined);
    expect(await run.outcome).toEqual({ status: 'SUCCEEDED', output: 'woke' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
  });

  it('the events of a run reach its listener as they happen, before the outcome settles', async () => {
    const seen: string[] = [];
    const interpreter = interpreterFor(jsonataMachine({ Sleep: { Type: 'Wait', Seconds: 3600, End: true } }));
    const run = interpreter.run({}, RUN_CONTEXT, (event) => seen.push(event.type));
    // The run is waiting, and its StateEntered is already logged.
    await expect.poll(() => seen).toEqual(['StateEntered']);
    run.abort();
    expect(await run.outcome).toEqual({ status: 'ABORTED' });
  });
});

describe('TimerQueue', () => {
  it('fires entries in due order, whatever the order they were scheduled in', async () => {
    const queue = new TimerQueue();
    const fired: number[] = [];
    for (const ms of [30, 10, 20, 0, 25, 5]) queue.schedule(ms, () => fired.push(ms));
    await expect.poll(() => fired).toEqual([0, 5, 10, 20, 25, 30]);
    expect(queue.size).toBe(0);
  });

  it('a cancelled entry never fires and the others still do', async () => {
    const queue = new TimerQueue();
    const fired: string[] = [];
    const entries = ['a', 'b', 'c', 'd'].map((name, i) => queue.schedule(10 + i * 5, () => fired.push(name)));
    queue.cancel(entries[0]!);
    queue.cancel(entries[2]!);
    queue.cancel(entries[2]!);
    await expect.poll(() => fired).toEqual(['b', 'd']);
  });

  it('a sleep ends at once when its run is stopped, and gives its entry back', async () => {
    const stop = new RunStop();
    const before = timers.size;
    const slept = sleep(3_600_000, stop);
    expect(timers.size).toBe(before + 1);
    stop.abort();
    await slept;
    expect(timers.size).toBe(before);
  });
});

describe('RunStop', () => {
  it('calls each listener once, in order, on the first abort only; a removed listener is not called', () => {
    const stop = new RunStop();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    stop.addEventListener('abort', () => calls.push('first'));
    stop.addEventListener('abort', removed);
    stop.addEventListener('abort', () => calls.push('second'));
    stop.removeEventListener('abort', removed);
    stop.abort();
    stop.abort();
    expect(stop.aborted).toBe(true);
    expect(calls).toEqual(['first', 'second']);
  });
});
