/** Worker `compute_chunk_stats` (analyze_dataset, one Map iteration): a chunk → its partial statistics. */
import * as z from 'zod';
import { partialStatsOf, type PartialStats } from '../../examples/partial-stats.ts';
import { syntheticDataset } from '../../examples/synthetic-dataset.ts';
import { parseWorkerInput } from '../../examples/worker-input.ts';

const Input = z.object({
  offset: z.number().int().min(0),
  count: z.number().int().min(1).max(1_000_000),
  seed: z.number().int(),
});

/** Lambda entry point. */
export async function handler(event: unknown): Promise<PartialStats> {
  const { offset, count, seed } = parseWorkerInput('compute_chunk_stats', Input, event);
  return partialStatsOf(syntheticDataset(seed).valueAt, offset, count);
}
