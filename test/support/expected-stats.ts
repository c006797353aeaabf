/** The statistics analyze_dataset must report, recomputed here the slow, obvious way (two passes). */
import { expect } from 'vitest';
import { syntheticDataset } from '../../lambdas/examples/synthetic-dataset.ts';

export function expectedStats(rows: number, seed: number) {
  const data = syntheticDataset(seed);
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < rows; i++) {
    const v = data.valueAt(i);
    sum += v;
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  const mean = sum / rows;
  let squares = 0;
  for (let i = 0; i < rows; i++) squares += (data.valueAt(i) - mean) ** 2;
  return { count: rows, mean, min, max, stddev: Math.sqrt(squares / rows) };
}

/** Checks analyze_dataset's statistics against `expectedStats`: the counts and extremes exactly, mean and stddev to 9 digits. */
export function expectStatsOf(stats: Record<string, unknown>, rows: number, seed: number): void {
  const expected = expectedStats(rows, seed);
  expect(stats.count).toBe(expected.count);
  expect(stats.min).toBe(expected.min);
  expect(stats.max).toBe(expected.max);
  expect(stats.mean).toBeCloseTo(expected.mean, 9);
  expect(stats.stddev).toBeCloseTo(expected.stddev, 9);
}
