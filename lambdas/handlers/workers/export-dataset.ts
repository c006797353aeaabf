/** Worker `export_dataset`: the dataset as CSV in the results bucket → a CallToolResult linking to it. */
import * as z from 'zod';
import { datasetCsv } from '../../examples/dataset-csv.ts';
import { parseWorkerInput } from '../../examples/worker-input.ts';
import { writeResult, type ResourceLinkResult } from '../../results/write-result.ts';

const Input = z.object({
  arguments: z.object({ rows: z.number().int().min(1).max(1_000_000), seed: z.number().int().optional() }),
  operation: z.object({ ownerId: z.string().min(1), token: z.string().min(1) }),
});

/** Lambda entry point. */
export async function handler(event: unknown): Promise<ResourceLinkResult> {
  const { arguments: args, operation } = parseWorkerInput('export_dataset', Input, event);
  const seed = args.seed ?? 1;
  return writeResult(operation, datasetCsv(args.rows, seed), {
    mimeType: 'text/csv',
    name: `dataset-${args.rows}-rows-seed-${seed}.csv`,
    description: `${args.rows} rows of the synthetic dataset (seed ${seed}), header index,value.`,
  });
}
