/**
 * A start that fails never holds a slot or runs twice: the failure branch of StartExecution
 * asks the engine about the derived execution name; slot repair at the limit reconciles
 * stalled records and stops expired ones; a cancel whose StopExecution succeeded is a cancel.
 */
import { describe, expect, it } from 'vitest';
import { REPAIR_ENGINE_CHECKS } from '../../lambdas/operations/active-slots.ts';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { coreHarness, expectOperationError } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool: ToolSpec = testTool({ name: 'analyze' });
const owner = 'owner-a';
const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
const start = (service: ReturnType<typeof coreHarness>['service'], token: string) =>
  service.start({ ownerId: owner, tool, arguments: { rows: 1 }, token, dialect: 'tasks-2026-07-28' });

describe('the failure branch of a start', () => {
  it('a throttled StartExecution that started nothing ends its record failed ("could not start") and frees its slot', async () => {
    const { service, store, engine } = coreHarness({ limits: { maxActiveOperations: 3 } });
    engine.failStartWith = throttled();
    await expectOperationError(start(service, 't'), 'INTERNAL');
    expect(await store.get({ ownerId: owner, token: 't' })).toMatchObject({
      status: 'failed',
      outcome: { kind: 'internal-error', message: expect.stringMatching(/^could not start: .*ThrottlingException/) },
    });
    expect(await store.listActiveSlots(owner)).toEqual([]);
    expect(engine.executionCount).toBe(0);
  });

  it('maxActiveOperations throttled starts never lock the principal out', async () => {
    const { service, engine } = coreHarness({ limits: { maxActiveOperations: 3 } });
    engine.failStartWith = throttled();
    for (const token of ['a', 'b', 'c', 'd']) await expectOperationError(start(service, token), 'INTERNAL');
    engine.failStartWith = undefined;
    for (const token of ['e', 'f', 'g']) expect((await start(service, token)).status).toBe('working');
  });

  it('a StartExecution whose answer was lost answers the operation: the client never retries into a second run', async () => {
    const { service, engine } = coreHarness();
    engine.loseStartResponse = true;
    const record = await start(service, 't');
    expect(record.status).toBe('working');
    expect(engine.executions.has(record.executionArn!)).toBe(true);
    expect(engine.executionCount).toBe(1);
  });

  it('an execution that appears after its start was failed (a StartExecution still on its way) is stopped by its RUNNING event', async () => {
    const { service, store, engine } = coreHarness();
    engine.failStartWith = throttled();
    await expectOperationError(start(service, 't'), 'INTERNAL');
    engine.failStartWith = undefined;
    const record = (await store.get({ ownerId: owner, token: 't' }))!;
    await engine.start({ stateMachineArn: tool.stateMachineArn, name: record.executionName, input: {} });
    await service.applyExecution(record, await engine.describe(record.executionArn!));
    expect(engine.executions.get(record.executionArn!)?.status).toBe('ABORTED');
    expect((await store.get(record))?.status).toBe('failed');
  });

  it('a failed start is told by the failedStart field of its outcome, not its message: only such a record stops a late RUNNING execution', async () => {
    const { service, store, engine } = coreHarness();
    engine.failStartWith = throttled();
    await expectOperationError(start(service, 't'), 'INTERNAL');
    engine.failStartWith = undefined;
    const failed = (await store.get({ ownerId: owner, token: 't' }))!;
    expect(failed.outcome).toMatchObject({ kind: 'internal-error', failedStart: true });
    // Another internal error whose message merely reads the same is not a failed start: its execution is left alone.
    const other = await start(service, 'u');
    const outcome = { kind: 'internal-error' as const, message: 'could not start: something else' };
    await store.transition(other, ['working'], { status: 'failed', outcome, updatedAt: other.updatedAt + 1 });
    await service.applyExecution(other, await engine.describe(other.executionArn!));
    expect(engine.executions.get(other.executionArn!)?.status).toBe('RUNNING');
  });

  it('when the engine cannot say, a StopExecution by the derived ARN settles it: nothing runs, and the record ends failed', async () => {
    const { service, store, engine } = coreHarness();
    engine.loseStartResponse = true;
    engine.failDescribeWith = throttled();
    await expectOperationError(start(service, 't'), 'INTERNAL');
    const [execution] = [...engine.executions.values()];
    expect(execution?.status).toBe('ABORTED');
    expect((await store.get({ ownerId: owner, token: 't' }))?.status).toBe('failed');
    expect(await store.listActiveSlots(owner)).toEqual([]);
  });

  it('when the engine can neither say nor stop, the record stays working with its slot, for repair to settle', async () => {
    const { service, store, engine } = coreHarness();
    engine.failStartWith = throttled();
    engine.failDescribeWith = throttled();
    engine.failStopWith = throttled();
    await expectOperationError(start(service, 't'), 'INTERNAL');
    expect((await store.get({ ownerId: owner, token: 't' }))?.status).toBe('working');
    expect(await store.listActiveSlots(owner)).toEqual(['t']);
  });
});

describe('slot repair at the limit', () => {
  it('reconciles working records older than the stall window: a start lost in a crash frees its slot', async () => {
    const { service, engine, clock } = coreHarness({ limits: { maxActiveOperations: 2 } });
    engine.failStartWith = throttled();
    engine.failDescribeWith = engine.failStopWith = throttled();
    await expectOperationError(start(service, 'a'), 'INTERNAL');
    await expectOperationError(start(service, 'b'), 'INTERNAL');
    engine.failStartWith = undefined;
    engine.failDescribeWith = engine.failStopWith = undefined;
    // Within the stall window nothing is given back: a start may still be on its way.
    await expectOperationError(start(service, 'c'), 'LIMIT_EXCEEDED');
    clock.advance(61);
    expect((await start(service, 'c')).status).toBe('working');
    expect((await service.readLive({ ownerId: owner, token: 'a' })).status).toBe('failed');
  });

  it('an execution that ended unseen (its event lost) frees its slot at the limit', async () => {
    const { service, engine, clock } = coreHarness({ limits: { maxActiveOperations: 1 } });
    const first = await start(service, 'a');
    engine.finish(first.executionArn!, { status: 'SUCCEEDED', output: { ok: 1 } });
    clock.advance(61);
    expect((await start(service, 'b')).status).toBe('working');
    expect(await service.readLive(first)).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { ok: 1 } } });
  });

  it('costs no DescribeExecution below the limit, and at most one per operation per reconcile interval at it', async () => {
    const { service, engine, clock } = coreHarness({ limits: { maxActiveOperations: 3 } });
    for (const token of ['a', 'b', 'c']) await start(service, token);
    clock.advance(120);
    expect(engine.describeCalls).toBe(0);
    for (let attempt = 0; attempt < 5; attempt++) await expectOperationError(start(service, `x${attempt}`), 'LIMIT_EXCEEDED');
    expect(engine.describeCalls).toBe(3);
  });

  it('asks the engine about at most a few operations per repair, however many slots are held', async () => {
    const { service, engine, clock } = coreHarness({ limits: { maxActiveOperations: 30 } });
    for (let n = 0; n < 30; n++) await start(service, `op-${n}`);
    clock.advance(120);
    await expectOperationError(start(service, 'one-more'), 'LIMIT_EXCEEDED');
    expect(engine.describeCalls).toBe(REPAIR_ENGINE_CHECKS);
  });

  it('an expired record still running is abandoned: its execution is stopped and its slot freed', async () => {
    const { service, engine, clock, store } = coreHarness({ limits: { maxActiveOperations: 1 } });
    const first = await start(service, 'a');
    clock.advance(first.expiresAt! - clock.ms / 1000 + 1);
    expect((await start(service, 'b')).status).toBe('working');
    expect(engine.executions.get(first.executionArn!)?.status).toBe('ABORTED');
    expect((await store.get(first))?.status).toBe('canceled');
  });
});

describe('cancel', () => {
  it('a cancel whose follow-up DescribeExecution is throttled still succeeds: StopExecution did', async () => {
    const { service, engine } = coreHarness();
    const record = await start(service, 't');
    engine.failDescribeWith = throttled();
    expect((await service.cancel(record)).status).toBe('canceled');
    expect(engine.executions.get(record.executionArn!)?.status).toBe('ABORTED');
  });

  it('a cancel whose StopExecution is throttled says it did not stop the execution', async () => {
    const { service, engine } = coreHarness();
    const record = await start(service, 't');
    engine.stop = async () => {
      throw throttled();
    };
    const error = await expectOperationError(service.cancel(record), 'INTERNAL');
    expect(error.message).toMatch(/did not stop/);
    expect((await service.readLive(record)).status).toBe('working');
  });
});
