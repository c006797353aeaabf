/**
 * The durable function engine, loaded on first use: a cold start, a poll and tools/list never
 * call Lambda's durable API, so they do not pay for importing the Lambda client.
 */
import type { LambdaClientConfig } from '@aws-sdk/client-lambda';
import type { WorkflowEngine } from '../operations/ports.ts';
import { deferredWorkflowEngine } from './deferred-workflow-engine.ts';
import { durableExecutionArnFor } from './durable-execution-arn.ts';

export function lazyDurableFunctionEngine(config: LambdaClientConfig): WorkflowEngine {
  return deferredWorkflowEngine(durableExecutionArnFor, () =>
    Promise.all([import('@aws-sdk/client-lambda'), import('./durable-function-engine.ts')]).then(
      ([{ LambdaClient }, { DurableFunctionEngine }]) => new DurableFunctionEngine(new LambdaClient(config)),
    ),
  );
}
