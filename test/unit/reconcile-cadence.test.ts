/**
 * Reconcile cadence under load: polls of a long operation cost DescribeExecution at the base
 * interval for its first ten minutes, then less and less, to one every fifteen minutes; a
 * record waiting on questions within their deadlines is never reconciled.
 */
import { describe, expect, it } from 'vitest';
import { simulateReconcileCadence } from '../../bench/reconcile-cadence.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { needsReconcile, reconcileIntervalMs, RECONCILE_MAX_INTERVAL_MS } from '../../lambdas/operations/reconcile-cadence.ts';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { coreHarness, TEST_LIMITS } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool: ToolSpec = testTool({ name: 'analyze', timing: { ...testTool({ name: 'x' }).timing, maxRunSeconds: 2 * 86_400 } });
const limits = { reconcileAfterSeconds: 60 };
const MINUTE = 60_000;

describe('reconcile interval', () => {
  it('is the one-minute base for the first ten minutes, then grows to fifteen minutes and stays there', () => {
    const record = { pollIntervalSeconds: 5 };
    expect(reconcileIntervalMs(record, 0, limits)).toBe(MINUTE);
    expect(reconcileIntervalMs(record, 9 * MINUTE, limits)).toBe(MINUTE);
    expect(reconcileIntervalMs(record, 15 * MINUTE, limits)).toBeGreaterThan(MINUTE);
    expect(reconcileIntervalMs(record, 60 * MINUTE, limits)).toBe(RECONCILE_MAX_INTERVAL_MS);
    expect(reconcileIntervalMs(record, 24 * 60 * MINUTE, limits)).toBe(15 * MINUTE);
  });

  it('never drops below the record’s own poll interval', () => {
    expect(reconcileIntervalMs({ pollIntervalSeconds: 1800 }, 24 * 60 * MINUTE, limits)).toBe(30 * MINUTE);
  });
});

describe('which reads reconcile', () => {
  const base = { status: 'input_required', createdAt: 0, updatedAt: 0, pollIntervalSeconds: 5 } as OperationRecord;
  const asked = (deadline?: number) =>
    ({
      ...base,
      pendingInputs: {
        q: { request: { method: 'elicitation/create', params: {} }, taskToken: 'tt', askedAt: 0, ...(deadline === undefined ? {} : { deadline }) },
      },
    }) as OperationRecord;

  it('never a record in input_required whose question is within its deadline', () => {
    expect(needsReconcile(asked(5 * 60 * MINUTE), 4 * 60 * MINUTE, limits)).toBe(false);
  });

  it('one whose question’s deadline has passed, at the backoff', () => {
    expect(needsReconcile(asked(60 * MINUTE), 4 * 60 * MINUTE, limits)).toBe(true);
  });

  it('one whose question has no deadline stored, no more often than the backoff says', () => {
    expect(needsReconcile({ ...asked(), updatedAt: 4 * 60 * MINUTE - 10 * MINUTE }, 4 * 60 * MINUTE, limits)).toBe(false);
    expect(needsReconcile({ ...asked(), updatedAt: 4 * 60 * MINUTE - 15 * MINUTE }, 4 * 60 * MINUTE, limits)).toBe(true);
  });

  it('never a terminal record', () => {
    expect(needsReconcile({ ...base, status: 'completed' }, 100 * 60 * MINUTE, limits)).toBe(false);
  });
});

describe('a polled day-long operation', () => {
  it('costs the service about a hundred DescribeExecution calls a day (not 1,440), as the bench simulates', async () => {
    const { service, engine, clock } = coreHarness({ limits: { ...TEST_LIMITS, reconcileAfterSeconds: 60, maxKeepAliveSeconds: 3600 } });
    const record = await service.start({ ownerId: 'o', tool, arguments: {}, token: 't', dialect: 'sep-1391' });
    for (let second = 0; second < 86_400; second += 30) {
      clock.advance(30);
      expect((await service.readCurrent(record)).status).toBe('working');
    }
    expect(engine.describeCalls).toBeLessThan(120);
    const simulated = simulateReconcileCadence({ operations: 1, hours: 24, pollSeconds: 30, limits: { ...TEST_LIMITS, reconcileAfterSeconds: 60 } });
    expect(engine.describeCalls).toBe(simulated.perHour.reduce((a, b) => a + b, 0));
  });

  it('the bench figure: 1,000 polled day-long operations cost under a tenth of the fixed cadence’s calls per hour', () => {
    const run = simulateReconcileCadence({ operations: 1000, hours: 24, pollSeconds: 5 });
    const mean = run.perHour.reduce((a, b) => a + b, 0) / run.hours;
    expect(run.fixedPerHour).toBeGreaterThan(59_000);
    expect(mean).toBeLessThan(run.fixedPerHour / 10);
    // Past the first hour, one call per operation every fifteen minutes.
    expect(Math.max(...run.perHour.slice(1))).toBe(4000);
  });
});
