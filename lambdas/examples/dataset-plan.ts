/**
 * Splits an analyze_dataset request into independent chunks for the Map state,
 * applying the argument defaults in one place.
 */

/** Rows per chunk: big enough to amortise a Lambda invocation, small enough to finish in seconds. */
export const CHUNK_ROWS = 100_000;
/** Seed used when the caller gives none, so an unseeded call is reproducible too. */
export const DEFAULT_SEED = 1;
/** Delay used when the caller gives none. */
export const DEFAULT_DELAY_SECONDS = 0;

/** The analyze_dataset arguments; `seed` and `delaySeconds` are optional. */
export interface DatasetRequest {
  rows: number;
  seed?: number | undefined;
  delaySeconds?: number | undefined;
}

/** One slice of the dataset: rows `offset … offset + count - 1` of the dataset for `seed`. */
export interface DatasetChunk {
  offset: number;
  count: number;
  seed: number;
}

/** What the plan worker returns: the Wait's duration and the Map's items. */
export interface DatasetPlan {
  delaySeconds: number;
  chunks: DatasetChunk[];
}

/** The plan for a request: contiguous chunks of at most `chunkRows` rows covering every row once. */
export function planDataset(request: DatasetRequest, chunkRows = CHUNK_ROWS): DatasetPlan {
  const { rows } = request;
  if (!Number.isSafeInteger(rows) || rows < 1) throw new RangeError(`rows must be a positive integer, got ${rows}`);
  if (!Number.isSafeInteger(chunkRows) || chunkRows < 1) throw new RangeError(`chunkRows must be a positive integer, got ${chunkRows}`);
  const seed = request.seed ?? DEFAULT_SEED;
  const chunks: DatasetChunk[] = [];
  for (let offset = 0; offset < rows; offset += chunkRows) {
    chunks.push({ offset, count: Math.min(chunkRows, rows - offset), seed });
  }
  return { delaySeconds: request.delaySeconds ?? DEFAULT_DELAY_SECONDS, chunks };
}
