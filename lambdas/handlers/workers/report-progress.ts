/**
 * Built-in worker `report_progress`: progress and log lines while a tool runs (see
 * lambdas/workers/report-progress-worker.ts). Deployed by the stack for every machine that
 * names `${Worker_report_progress}`; the local runtime runs it in-process.
 */
import { deployedOperations } from '../../app/deployed-operations.ts';
import { createReportProgressHandler } from '../../workers/report-progress-worker.ts';

/** Lambda entry point. */
export const handler = createReportProgressHandler(deployedOperations);
