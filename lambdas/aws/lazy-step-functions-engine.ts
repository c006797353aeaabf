/**
 * The Step Functions engine, loaded on first use: a poll never calls Step Functions, so a
 * cold start does not pay for importing the SFN client (about 40 ms of module init). An
 * execution's ARN is derived without it.
 */
import type { SFNClientConfig } from '@aws-sdk/client-sfn';
import type { ExecutionSnapshot, StartExecutionInput, WorkflowEngine } from '../operations/ports.ts';
import { executionArnFor } from './execution-arn.ts';

export function lazyStepFunctionsEngine(config: SFNClientConfig): WorkflowEngine {
  let loaded: Promise<WorkflowEngine> | undefined;
  const engine = () =>
    (loaded ??= Promise.all([import('@aws-sdk/client-sfn'), import('./step-functions-engine.ts')]).then(
      ([{ SFNClient }, { StepFunctionsEngine }]) => new StepFunctionsEngine(new SFNClient(config)),
    ));
  return {
    executionArnFor,
    start: async (input: StartExecutionInput) => (await engine()).start(input),
    startSync: async (input: StartExecutionInput, signal?: AbortSignal): Promise<ExecutionSnapshot> => (await engine()).startSync(input, signal),
    describe: async (executionArn: string) => (await engine()).describe(executionArn),
    stop: async (executionArn, reason) => (await engine()).stop(executionArn, reason),
    sendTaskSuccess: async (taskToken, output) => (await engine()).sendTaskSuccess(taskToken, output),
    sendTaskFailure: async (taskToken, failure) => (await engine()).sendTaskFailure(taskToken, failure),
  };
}
