/** Worker `plan_dataset_chunks` (analyze_dataset): the tool arguments → `{ delaySeconds, chunks }`. */
import * as z from 'zod';
import { planDataset, type DatasetPlan } from '../../examples/dataset-plan.ts';
import { parseWorkerInput } from '../../examples/worker-input.ts';

const Input = z.object({
  rows: z.number().int().min(1).max(1_000_000),
  seed: z.number().int().optional(),
  delaySeconds: z.number().int().min(0).max(86_400).optional(),
});

/** Lambda entry point. */
export async function handler(event: unknown): Promise<DatasetPlan> {
  return planDataset(parseWorkerInput('plan_dataset_chunks', Input, event));
}
