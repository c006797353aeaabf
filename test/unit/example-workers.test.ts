import { describe, expect, it } from 'vitest';
import { handler as calculate } from '../../lambdas/handlers/workers/calculate.ts';
import { handler as computeChunkStats } from '../../lambdas/handlers/workers/compute-chunk-stats.ts';
import { handler as mergeChunkStats } from '../../lambdas/handlers/workers/merge-chunk-stats.ts';
import { handler as planDatasetChunks } from '../../lambdas/handlers/workers/plan-dataset-chunks.ts';
import { handler as reportTestSuite } from '../../lambdas/handlers/workers/report-test-suite.ts';
import { handler as planDeployment } from '../../lambdas/handlers/workers/plan-deployment.ts';
import { handler as applyDeployment } from '../../lambdas/handlers/workers/apply-deployment.ts';
import { CHUNK_ROWS, DEFAULT_SEED } from '../../lambdas/examples/dataset-plan.ts';
import { mergePartialStats, partialStatsOf, type PartialStats } from '../../lambdas/examples/partial-stats.ts';
import { DATASET_MEAN, DATASET_STDDEV, syntheticDataset } from '../../lambdas/examples/synthetic-dataset.ts';

function relativeError(actual: number, expected: number): number {
  return expected === 0 ? Math.abs(actual) : Math.abs((actual - expected) / expected);
}

/** Two-pass reference statistics over a plain array. */
function referenceStats(values: number[]) {
  const count = values.length;
  const mean = values.reduce((sum, x) => sum + x, 0) / count;
  const m2 = values.reduce((sum, x) => sum + (x - mean) ** 2, 0);
  return { count, mean, m2, min: Math.min(...values), max: Math.max(...values), stddev: Math.sqrt(m2 / count) };
}

function expectStatsClose(actual: PartialStats, expected: PartialStats, tolerance = 1e-12): void {
  expect(actual.count).toBe(expected.count);
  expect(actual.min).toBe(expected.min);
  expect(actual.max).toBe(expected.max);
  expect(relativeError(actual.mean, expected.mean)).toBeLessThan(tolerance);
  expect(relativeError(actual.m2, expected.m2)).toBeLessThan(tolerance);
}

describe('synthetic dataset', () => {
  it('value i depends only on the seed and i, so a value reads the same from anywhere', () => {
    const a = syntheticDataset(7);
    const b = syntheticDataset(7);
    const forward = [0, 1, 2, 99_999, 100_000, 999_999].map((i) => a.valueAt(i));
    const backward = [999_999, 100_000, 99_999, 2, 1, 0].map((i) => b.valueAt(i)).reverse();
    expect(backward).toEqual(forward);
  });

  it('different seeds (including negative and beyond 32 bits) give different streams', () => {
    const seeds = [0, 1, 2, -1, 2 ** 32, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    const firstValues = seeds.map((seed) => syntheticDataset(seed).valueAt(0));
    expect(new Set(firstValues).size).toBe(seeds.length);
  });

  it('is bell-shaped around the documented mean and spread', () => {
    const dataset = syntheticDataset(123);
    const values = Array.from({ length: 50_000 }, (_, i) => dataset.valueAt(i));
    const { mean, stddev, min, max } = referenceStats(values);
    expect(Math.abs(mean - DATASET_MEAN)).toBeLessThan(0.5);
    expect(Math.abs(stddev - DATASET_STDDEV)).toBeLessThan(0.5);
    expect(min).toBeGreaterThanOrEqual(DATASET_MEAN - 2 * Math.sqrt(3) * DATASET_STDDEV);
    expect(max).toBeLessThanOrEqual(DATASET_MEAN + 2 * Math.sqrt(3) * DATASET_STDDEV);
  });

  it('rejects a seed or index that is not a safe integer', () => {
    expect(() => syntheticDataset(1.5)).toThrow(RangeError);
    expect(() => syntheticDataset(1).valueAt(-1)).toThrow(RangeError);
  });
});

describe('plan_dataset_chunks', () => {
  it('plans one chunk of one row for rows = 1, applying the default seed and delay', async () => {
    await expect(planDatasetChunks({ rows: 1 })).resolves.toEqual({
      delaySeconds: 0,
      chunks: [{ offset: 0, count: 1, seed: DEFAULT_SEED }],
    });
  });

  it('plans exact multiples of the chunk size without an empty trailing chunk', async () => {
    const plan = await planDatasetChunks({ rows: 3 * CHUNK_ROWS, seed: 5, delaySeconds: 12 });
    expect(plan.delaySeconds).toBe(12);
    expect(plan.chunks).toEqual([
      { offset: 0, count: CHUNK_ROWS, seed: 5 },
      { offset: CHUNK_ROWS, count: CHUNK_ROWS, seed: 5 },
      { offset: 2 * CHUNK_ROWS, count: CHUNK_ROWS, seed: 5 },
    ]);
  });

  it('puts the remainder in a shorter last chunk', async () => {
    const plan = await planDatasetChunks({ rows: CHUNK_ROWS + 1, seed: 0 });
    expect(plan.chunks).toEqual([
      { offset: 0, count: CHUNK_ROWS, seed: 0 },
      { offset: CHUNK_ROWS, count: 1, seed: 0 },
    ]);
  });

  it('covers 1,000,000 rows with ten contiguous chunks', async () => {
    const { chunks } = await planDatasetChunks({ rows: 1_000_000 });
    expect(chunks).toHaveLength(10);
    expect(chunks.reduce((sum, c) => sum + c.count, 0)).toBe(1_000_000);
    for (const [i, chunk] of chunks.entries()) expect(chunk.offset).toBe(i * CHUNK_ROWS);
  });

  it('rejects rows outside 1..1,000,000 with InvalidWorkerInput', async () => {
    for (const rows of [0, 1_000_001, 2.5]) {
      await expect(planDatasetChunks({ rows })).rejects.toMatchObject({ name: 'InvalidWorkerInput' });
    }
  });
});

describe('compute_chunk_stats', () => {
  it('summarises exactly the rows offset … offset + count - 1', async () => {
    const dataset = syntheticDataset(42);
    const values = Array.from({ length: 1000 }, (_, i) => dataset.valueAt(500 + i));
    const expected = referenceStats(values);
    const stats = await computeChunkStats({ offset: 500, count: 1000, seed: 42 });
    expectStatsClose(stats, expected);
  });

  it('gives a single row zero spread', async () => {
    const stats = await computeChunkStats({ offset: 3, count: 1, seed: 9 });
    const value = syntheticDataset(9).valueAt(3);
    expect(stats).toEqual({ count: 1, mean: value, m2: 0, min: value, max: value });
  });

  it('rejects an empty chunk', async () => {
    await expect(computeChunkStats({ offset: 0, count: 0, seed: 1 })).rejects.toMatchObject({ name: 'InvalidWorkerInput' });
  });
});

describe('merge_chunk_stats', () => {
  const dataset = syntheticDataset(2024);
  const [a, b, c] = [
    [0, 1000],
    [1000, 1],
    [1001, 4321],
  ].map(([offset, count]) => partialStatsOf(dataset.valueAt, offset!, count!)) as [PartialStats, PartialStats, PartialStats];

  it('merging partials equals summarising all their rows at once', () => {
    const whole = referenceStats(Array.from({ length: 5322 }, (_, i) => dataset.valueAt(i)));
    expectStatsClose(mergePartialStats(mergePartialStats(a, b), c), whole);
  });

  it('is associative and commutative up to rounding', () => {
    const left = mergePartialStats(mergePartialStats(a, b), c);
    expectStatsClose(mergePartialStats(a, mergePartialStats(b, c)), left);
    expectStatsClose(mergePartialStats(c, mergePartialStats(b, a)), left);
  });

  it('returns count, mean, min, max and the population standard deviation', async () => {
    const values = Array.from({ length: 5322 }, (_, i) => dataset.valueAt(i));
    const expected = referenceStats(values);
    const summary = await mergeChunkStats({ partials: [a, b, c] });
    expect(Object.keys(summary).sort()).toEqual(['count', 'max', 'mean', 'min', 'stddev']);
    expect(summary.count).toBe(5322);
    expect(summary.min).toBe(expected.min);
    expect(summary.max).toBe(expected.max);
    expect(relativeError(summary.mean, expected.mean)).toBeLessThan(1e-12);
    expect(relativeError(summary.stddev, expected.stddev)).toBeLessThan(1e-12);
  });

  it('uses the population formula: {1, 3} has stddev 1', async () => {
    const summary = await mergeChunkStats({
      partials: [
        { count: 1, mean: 1, m2: 0, min: 1, max: 1 },
        { count: 1, mean: 3, m2: 0, min: 3, max: 3 },
      ],
    });
    expect(summary).toEqual({ count: 2, mean: 2, min: 1, max: 3, stddev: 1 });
  });

  it('rejects an empty list of partials', async () => {
    await expect(mergeChunkStats({ partials: [] })).rejects.toMatchObject({ name: 'InvalidWorkerInput' });
  });
});

describe('calculate', () => {
  it.each([
    ['add', 6, 3, 9],
    ['sub', 6, 3, 3],
    ['mul', 6, 3, 18],
    ['div', 6, 3, 2],
    ['div', 1, 4, 0.25],
    ['sub', -1.5, 2, -3.5],
  ] as const)('%s(%d, %d) = %d', async (op, a, b, result) => {
    await expect(calculate({ a, b, op })).resolves.toEqual({ result });
  });

  it('throws DivisionByZero for b = 0 (and -0)', async () => {
    await expect(calculate({ a: 1, b: 0, op: 'div' })).rejects.toMatchObject({ name: 'DivisionByZero' });
    await expect(calculate({ a: 0, b: -0, op: 'div' })).rejects.toMatchObject({ name: 'DivisionByZero' });
  });

  it('throws NonFiniteResult rather than return Infinity, which JSON cannot carry', async () => {
    await expect(calculate({ a: Number.MAX_VALUE, b: 10, op: 'mul' })).rejects.toMatchObject({ name: 'NonFiniteResult' });
  });

  it('rejects an unknown operation', async () => {
    await expect(calculate({ a: 1, b: 2, op: 'pow' })).rejects.toMatchObject({ name: 'InvalidWorkerInput' });
  });
});

describe('report_test_suite', () => {
  it('reports failures as failed and the rest as passed', async () => {
    await expect(reportTestSuite({ suite: 'unit', tests: 10, failures: 3, durationSeconds: 5 })).resolves.toEqual({
      suite: 'unit',
      passed: 7,
      failed: 3,
      durationSeconds: 5,
    });
  });

  it('allows every test to fail', async () => {
    await expect(reportTestSuite({ suite: 's', tests: 4, failures: 4, durationSeconds: 0, crash: false })).resolves.toMatchObject({
      passed: 0,
      failed: 4,
    });
  });

  it('throws TestSuiteCrashed when asked to crash', async () => {
    await expect(reportTestSuite({ suite: 'unit', tests: 10, failures: 0, durationSeconds: 0, crash: true })).rejects.toMatchObject({
      name: 'TestSuiteCrashed',
    });
  });

  it('refuses failures > tests even if the state machine let it through', async () => {
    await expect(reportTestSuite({ suite: 'unit', tests: 1, failures: 2, durationSeconds: 0 })).rejects.toMatchObject({
      name: 'InvalidTestCounts',
    });
  });
});

describe('plan_deployment', () => {
  it('numbers the changes in order, trimmed, and asks "Deploy N changes to <environment>?" above the list', async () => {
    await expect(planDeployment({ environment: 'staging', changes: ['api: v2', '  web: v3 '] })).resolves.toEqual({
      environment: 'staging',
      count: 2,
      steps: [
        { step: 1, change: 'api: v2' },
        { step: 2, change: 'web: v3' },
      ],
      message: 'Deploy 2 changes to staging?\n1. api: v2\n2. web: v3',
    });
  });

  it('says "1 change" for one change', async () => {
    await expect(planDeployment({ environment: 'production', changes: ['api: v2'] })).resolves.toMatchObject({
      message: 'Deploy 1 change to production?\n1. api: v2',
    });
  });

  it('refuses an empty list of changes as InvalidWorkerInput', async () => {
    await expect(planDeployment({ environment: 'staging', changes: [] })).rejects.toMatchObject({ name: 'InvalidWorkerInput' });
  });
});

describe('apply_deployment', () => {
  const plan = {
    environment: 'staging',
    count: 2,
    steps: [
      { step: 1, change: 'api: v2' },
      { step: 2, change: 'web: v3' },
    ],
    message: 'Deploy 2 changes to staging?',
  };

  it('an accepted answer deploys every step and keeps the trimmed comment', async () => {
    await expect(applyDeployment({ plan, answer: { action: 'accept', content: { comment: ' looks good ' } } })).resolves.toEqual({
      environment: 'staging',
      planned: 2,
      deployed: true,
      decision: 'accept',
      comment: 'looks good',
      changes: [
        { step: 1, change: 'api: v2', status: 'deployed' },
        { step: 2, change: 'web: v3', status: 'deployed' },
      ],
      summary: 'Deployed 2 changes to staging. Comment: looks good',
    });
  });

  it('an accepted answer with a blank comment reports no comment', async () => {
    const report = await applyDeployment({ plan, answer: { action: 'accept', content: { comment: '  ' } } });
    expect(report).not.toHaveProperty('comment');
    expect(report.summary).toBe('Deployed 2 changes to staging.');
  });

  it.each([
    ['decline', 'Deployed nothing to staging: the approver declined.'],
    ['cancel', 'Deployed nothing to staging: the approver dismissed the question.'],
    ['timeout', 'Deployed nothing to staging: nobody answered in time.'],
  ] as const)('%s deploys nothing: every step skipped', async (action, summary) => {
    const report = await applyDeployment({ plan, answer: { action } });
    expect(report).toMatchObject({ deployed: false, decision: action, summary });
    expect(report.changes.map((c) => c.status)).toEqual(['skipped', 'skipped']);
  });

  it('refuses an answer that is not an elicitation action as InvalidWorkerInput', async () => {
    await expect(applyDeployment({ plan, answer: { action: 'maybe' } })).rejects.toMatchObject({ name: 'InvalidWorkerInput' });
  });
});

describe('plan_test_run', () => {
  it('cuts a run into one-second ticks, or 120 even ones when longer, summing to its duration', async () => {
    const { handler } = await import('../../lambdas/handlers/workers/plan-test-run.ts');
    expect(await handler({ durationSeconds: 0 })).toEqual({ ticks: [] });
    expect((await handler({ durationSeconds: 3 })).ticks).toEqual([
      { seconds: 1, elapsed: 1 },
      { seconds: 1, elapsed: 2 },
      { seconds: 1, elapsed: 3 },
    ]);
    const long = (await handler({ durationSeconds: 3599 })).ticks;
    expect(long.length).toBeLessThanOrEqual(120);
    expect(long.reduce((sum, tick) => sum + tick.seconds, 0)).toBe(3599);
    expect(long.at(-1)!.elapsed).toBe(3599);
  });
});
