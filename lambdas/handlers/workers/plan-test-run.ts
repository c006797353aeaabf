/** Worker `plan_test_run` (run_test_suite): the run's duration → the ticks it reports progress at. */
import * as z from 'zod';
import { progressTicks, type RunTick } from '../../examples/test-suite-report.ts';
import { parseWorkerInput } from '../../examples/worker-input.ts';

const Input = z.object({ durationSeconds: z.number().int().min(0).max(3600) });

/** Lambda entry point. */
export async function handler(event: unknown): Promise<{ ticks: RunTick[] }> {
  return { ticks: progressTicks(parseWorkerInput('plan_test_run', Input, event).durationSeconds) };
}
