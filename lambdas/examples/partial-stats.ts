/**
 * Partial statistics that merge without revisiting the data: count, mean, M2 (sum of
 * squared deviations from the mean), min and max. Values are folded in with Welford's
 * update and partials are combined with Chan et al.'s pairwise formula, both
 * numerically stable, so chunks can be summarised independently and merged in any grouping.
 */

/** Summary of a non-empty slice of data. `m2` is the sum of squared deviations from `mean`. */
export interface PartialStats {
  count: number;
  mean: number;
  m2: number;
  min: number;
  max: number;
}

/** The final statistics; `stddev` is the population standard deviation √(M2 / count). */
export interface DatasetSummary {
  count: number;
  mean: number;
  min: number;
  max: number;
  stddev: number;
}

/** Statistics of `valueAt(offset) … valueAt(offset + count - 1)`, one pass (Welford). */
export function partialStatsOf(valueAt: (index: number) => number, offset: number, count: number): PartialStats {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
  let mean = 0;
  let m2 = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let n = 1; n <= count; n++) {
    const x = valueAt(offset + n - 1);
    const delta = x - mean;
    mean += delta / n;
    m2 += delta * (x - mean);
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return { count, mean, m2, min, max };
}

/** Combines two partials as if their data had been summarised together (Chan et al.). */
export function mergePartialStats(a: PartialStats, b: PartialStats): PartialStats {
  const count = a.count + b.count;
  const delta = b.mean - a.mean;
  return {
    count,
    mean: a.mean + (delta * b.count) / count,
    m2: a.m2 + b.m2 + (delta * delta * a.count * b.count) / count,
    min: Math.min(a.min, b.min),
    max: Math.max(a.max, b.max),
  };
}

/** Merges partials left to right; the order is fixed so a result is exactly reproducible. */
export function mergeAllPartialStats(partials: readonly PartialStats[]): PartialStats {
  const [first, ...rest] = partials;
  if (!first) throw new RangeError('at least one partial is needed');
  return rest.reduce(mergePartialStats, first);
}

/** The final summary of merged partials. */
export function summarize(stats: PartialStats): DatasetSummary {
  // M2 never goes negative in exact arithmetic; the clamp keeps rounding from producing NaN.
  const stddev = Math.sqrt(Math.max(0, stats.m2) / stats.count);
  return { count: stats.count, mean: stats.mean, min: stats.min, max: stats.max, stddev };
}
