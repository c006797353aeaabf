/**
 * The Step Functions engine, loaded on first use: a poll never calls Step Functions, so a
 * cold start does not pay for importing the SFN client (about 40 ms of module init).
 */
import type { SFNClientConfig } from '@aws-sdk/client-sfn';
import type { WorkflowEngine } from '../operations/ports.ts';
import { deferredWorkflowEngine } from './deferred-workflow-engine.ts';
import { executionArnFor } from './execution-arn.ts';

export function lazyStepFunctionsEngine(config: SFNClientConfig): WorkflowEngine {
  return deferredWorkflowEngine(executionArnFor, () =>
    Promise.all([import('@aws-sdk/client-sfn'), import('./step-functions-engine.ts')]).then(
      ([{ SFNClient }, { StepFunctionsEngine }]) => new StepFunctionsEngine(new SFNClient(config)),
    ),
  );
}
