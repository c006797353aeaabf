/**
 * Issue "Loses no work", section 2: a fault at each crash point of a start leaves no
 * orphan, no false failure and never a second execution; reconciliation is honest and
 * done by one poller at a time.
 */
import { describe, expect, it, vi } from 'vitest';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { coreHarness, expectOperationError } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool: ToolSpec = testTool({ name: 'analyze' });
const owner = 'owner-a';
const key = { ownerId: owner, token: 't' };
const startInput = { ownerId: owner, tool, arguments: { rows: 1 }, token: 't', dialect: 'sep-1391' as const };

describe('crash points of a start', () => {
  it('after the put, before StartExecution: a retry starts the one execution', async () => {
    const { service, engine, store } = coreHarness();
    // The starter crashed: nothing in it asked the engine whether its start went through.
    engine.failStartWith = new Error('connection reset');
    engine.failDescribeWith = engine.failStopWith = new Error('connection reset');
    await expectOperationError(service.start(startInput), 'INTERNAL');
    expect(engine.executionCount).toBe(0);
    // Created working: nothing tells a start that never reached Step Functions apart but time.
    expect((await store.get(key))?.status).toBe('working');
    engine.failStartWith = undefined;
    engine.failDescribeWith = engine.failStopWith = undefined;
    expect((await service.start(startInput)).status).toBe('working');
    expect(engine.executionCount).toBe(1);
  });

  it('after the put, with no retry: the record fails as never started only once the stall window has passed', async () => {
    const { service, engine, clock } = coreHarness();
    engine.failStartWith = new Error('connection reset');
    engine.failDescribeWith = engine.failStopWith = new Error('connection reset');
    await expectOperationError(service.start(startInput), 'INTERNAL');
    engine.failDescribeWith = engine.failStopWith = undefined;
    clock.advance(30);
    expect((await service.readCurrent(key)).status).toBe('working');
    clock.advance(31);
    expect(await service.readCurrent(key)).toMatchObject({
      status: 'failed',
      outcome: { kind: 'internal-error', message: expect.stringContaining('never started') },
    });
  });

  it('after StartExecution (its answer lost): reconcile finds the running execution by its derived ARN and never fails it', async () => {
    const { service, engine, clock } = coreHarness();
    engine.loseStartResponse = true;
    engine.failDescribeWith = engine.failStopWith = new Error('connection reset');
    await expectOperationError(service.start(startInput), 'INTERNAL');
    engine.failDescribeWith = engine.failStopWith = undefined;
    expect(engine.executionCount).toBe(1);
    clock.advance(120);
    const reconciled = await service.readCurrent(key);
    expect(reconciled.status).toBe('working');
    expect(engine.executions.has(reconciled.executionArn!)).toBe(true);
  });

  it('after StartExecution (its answer lost): a retry never starts a second execution', async () => {
    const { service, engine } = coreHarness();
    engine.loseStartResponse = true;
    engine.failDescribeWith = engine.failStopWith = new Error('connection reset');
    await expectOperationError(service.start(startInput), 'INTERNAL');
    engine.loseStartResponse = false;
    engine.failDescribeWith = engine.failStopWith = undefined;
    expect((await service.start(startInput)).status).toBe('working');
    expect(engine.executionCount).toBe(1);
  });

  it('after StartExecution, its check for a cancel fails: the execution runs on and the result still lands', async () => {
    const { service, engine, store } = coreHarness();
    const get = vi.spyOn(store, 'get').mockRejectedValueOnce(new Error('ProvisionedThroughputExceeded'));
    await expect(service.start(startInput)).rejects.toThrow('ProvisionedThroughputExceeded');
    get.mockRestore();
    const [execution] = [...engine.executions.values()];
    expect((await service.applyExecution(key, await engine.describe(execution!.executionArn)))?.status).toBe('working');
    const done = engine.finish(execution!.executionArn, { status: 'SUCCEEDED', output: { ok: 1 } });
    expect(await service.applyExecution(key, done)).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { ok: 1 } } });
    expect(engine.executionCount).toBe(1);
  });
});

describe('status sync checks the execution', () => {
  it('an event from another execution (a token reused after expiry) never writes into the record', async () => {
    const { service, engine } = coreHarness();
    const record = await service.start(startInput);
    const stranger = {
      executionArn: `${record.executionArn!.replace(record.executionName, 'op-someone-else')}`,
      status: 'SUCCEEDED' as const,
      output: { stolen: true },
    };
    expect(await service.applyExecution(key, stranger)).toBeUndefined();
    expect((await service.readCurrent(key)).status).toBe('working');
    expect(engine.executionCount).toBe(1);
  });
});

describe('no reconcile herd', () => {
  it('20 concurrent polls of a stale record cost one DescribeExecution', async () => {
    const { service, engine, clock } = coreHarness();
    await service.start(startInput);
    clock.advance(31);
    const polls = await Promise.all(Array.from({ length: 20 }, () => service.readCurrent(key)));
    expect(polls.every((r) => r.status === 'working')).toBe(true);
    expect(engine.describeCalls).toBe(1);
  });

  it('at most one DescribeExecution per running operation per reconcile interval', async () => {
    const { service, engine, clock } = coreHarness();
    await service.start(startInput);
    for (let second = 0; second < 95; second++) {
      clock.advance(1);
      await Promise.all([service.readCurrent(key), service.readCurrent(key), service.readCurrent(key)]);
    }
    // 95 s of polling with a 30 s interval: reconciled at 30, 60 and 90 s.
    expect(engine.describeCalls).toBe(3);
  });

  it('a fresh record is one read: no DescribeExecution', async () => {
    const { service, engine } = coreHarness();
    await service.start(startInput);
    await service.readCurrent(key);
    expect(engine.describeCalls).toBe(0);
  });
});
