/** Worker `merge_chunk_stats` (analyze_dataset): `{ partials }` from the Map → the final summary. */
import * as z from 'zod';
import { mergeAllPartialStats, summarize, type DatasetSummary } from '../../examples/partial-stats.ts';
import { parseWorkerInput } from '../../examples/worker-input.ts';

const finite = z.number().refine(Number.isFinite, 'must be finite');
const Input = z.object({
  partials: z.array(z.object({ count: z.number().int().min(1), mean: finite, m2: finite.min(0), min: finite, max: finite })).min(1),
});

/** Lambda entry point. */
export async function handler(event: unknown): Promise<DatasetSummary> {
  const { partials } = parseWorkerInput('merge_chunk_stats', Input, event);
  return summarize(mergeAllPartialStats(partials));
}
