/** Worker `report_test_suite` (run_test_suite): the tool arguments → the suite's report. */
import * as z from 'zod';
import { reportTestSuite, type TestSuiteReport } from '../../examples/test-suite-report.ts';
import { parseWorkerInput } from '../../examples/worker-input.ts';

const Input = z.object({
  suite: z.string().min(1).max(200),
  tests: z.number().int().min(1).max(10_000),
  failures: z.number().int().min(0).max(10_000),
  durationSeconds: z.number().int().min(0).max(3600),
  crash: z.boolean().optional(),
});

/** Lambda entry point; throws `TestSuiteCrashed` when asked to crash. */
export async function handler(event: unknown): Promise<TestSuiteReport> {
  return reportTestSuite(parseWorkerInput('report_test_suite', Input, event));
}
