/**
 * Built-in worker `request_input`: asks the client a question mid-run (see
 * lambdas/workers/request-input-worker.ts). Deployed by the stack for every machine that
 * names `${Worker_request_input}`; the local runtime runs it in-process.
 */
import { deployedMetrics, deployedOperations } from '../../app/deployed-operations.ts';
import { observeInvocation, type InvocationContext } from '../../observability/request-observer.ts';
import { createRequestInputHandler } from '../../workers/request-input-worker.ts';

const invocation = observeInvocation(deployedMetrics);
const ask = createRequestInputHandler(deployedOperations);

/** Lambda entry point; the question's metric (InputRequired) is flushed before it returns. */
export const handler = (event: unknown, context?: InvocationContext): Promise<{ key: string }> => invocation(context, () => ask(event));
