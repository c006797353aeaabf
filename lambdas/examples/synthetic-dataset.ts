/**
 * A seeded, index-addressable synthetic dataset: value `i` depends only on the seed
 * and `i`, so any slice can be generated on its own (one Map iteration per chunk)
 * and the whole can be regenerated sequentially to check the result.
 * Only integer mixing and IEEE-754 arithmetic is used (no Math.random, no
 * transcendental functions), so the values are bit-for-bit reproducible everywhere.
 */

/** Centre of the distribution. */
export const DATASET_MEAN = 100;
/** Standard deviation of the distribution. */
export const DATASET_STDDEV = 15;

const TWO_POW_32 = 4_294_967_296;
const GOLDEN_GAMMA = 0x9e3779b9;
const SQRT_3 = Math.sqrt(3);

/** A synthetic dataset: `valueAt(i)` for any non-negative integer `i`. */
export interface SyntheticDataset {
  readonly seed: number;
  valueAt(index: number): number;
}

/**
 * The dataset for `seed` (any safe integer). Each value is an Irwin–Hall sum of four
 * uniforms, rescaled to mean {@link DATASET_MEAN} and standard deviation
 * {@link DATASET_STDDEV}: bell-shaped and bounded to 100 ± 30√3.
 */
export function syntheticDataset(seed: number): SyntheticDataset {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
  // Both 32-bit halves feed the key, so distinct safe seeds give distinct streams.
  const low = seed >>> 0;
  const high = Math.floor(seed / TWO_POW_32) >>> 0;
  const key1 = mix32(low ^ GOLDEN_GAMMA);
  const key2 = mix32((high + key1) >>> 0);
  return {
    seed,
    valueAt(index: number): number {
      if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`index must be a non-negative integer, got ${index}`);
      // The key enters twice (xor, then add) so two seeds' streams are not shifts of each other.
      const base = (mix32((index ^ key1) >>> 0) + key2) >>> 0;
      let sum = 0;
      for (let k = 1; k <= 4; k++) sum += mix32((base + k * GOLDEN_GAMMA) >>> 0) / TWO_POW_32;
      // The sum of four U(0,1) has mean 2 and variance 1/3.
      return DATASET_MEAN + DATASET_STDDEV * SQRT_3 * (sum - 2);
    },
  };
}

/** A 32-bit avalanche mixer ("lowbias32", C. Wellons). */
function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}
