/**
 * The MCP function's Step Functions engine, loaded on first use: a poll never calls Step
 * Functions, so a cold start does not pay for importing the SFN client (about 40 ms of module
 * init). A start's StartExecution goes over the hot wire (hot-start-execution.ts).
 */
import type { SFNClientConfig } from '@aws-sdk/client-sfn';
import type { WorkflowEngine } from '../operations/ports.ts';
import { deferredWorkflowEngine } from './deferred-workflow-engine.ts';
import { executionArnFor } from './execution-arn.ts';
import type { HotCallOptions } from './hot-call.ts';

/** `options.onWireDropped` hears when the hot wire is given up (every start then takes the SDK path). */
export function lazyStepFunctionsEngine(config: SFNClientConfig, options: HotCallOptions = {}): WorkflowEngine {
  return deferredWorkflowEngine(executionArnFor, () =>
    Promise.all([import('@aws-sdk/client-sfn'), import('./step-functions-engine.ts'), import('./hot-start-execution.ts')]).then(
      ([{ SFNClient }, { StepFunctionsEngine }, { HotStartExecution }]) => {
        const client = new SFNClient(config);
        return new StepFunctionsEngine(client, new HotStartExecution(client, options));
      },
    ),
  );
}
