/**
 * Built-in worker `request_input`: asks the client a question mid-run (see
 * lambdas/workers/request-input-worker.ts). Deployed by the stack for every machine that
 * names `${Worker_request_input}`; the local runtime runs it in-process.
 */
import { deployedOperations } from '../../app/deployed-operations.ts';
import { createRequestInputHandler } from '../../workers/request-input-worker.ts';

/** Lambda entry point. */
export const handler = createRequestInputHandler(deployedOperations);
