/**
 * The durable function engine, loaded on first use: a cold start, a poll and tools/list never
 * call Lambda's durable API, so they do not pay for importing the Lambda client. An
 * execution's ARN is derived without it.
 */
import type { LambdaClientConfig } from '@aws-sdk/client-lambda';
import type { ExecutionSnapshot, StartExecutionInput, WorkflowEngine } from '../operations/ports.ts';

/**
 * `DurableFunctionEngine.executionArnFor`, restated here because importing that module loads
 * the Lambda client; test/unit/lazy-durable-function-engine.test.ts holds the two equal.
 */
function executionArnFor(functionArn: string, name: string): string {
  return `${functionArn}/durable-execution/${name}/by-name`;
}

export function lazyDurableFunctionEngine(config: LambdaClientConfig): WorkflowEngine {
  let loaded: Promise<WorkflowEngine> | undefined;
  const engine = () =>
    (loaded ??= Promise.all([import('@aws-sdk/client-lambda'), import('./durable-function-engine.ts')]).then(
      ([{ LambdaClient }, { DurableFunctionEngine }]) => new DurableFunctionEngine(new LambdaClient(config)),
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
