/**
 * Starts the local durable service with the test handlers and a Lambda client on it, the
 * unmodified `@aws-sdk/client-lambda` with dummy credentials.
 */
import { GetDurableExecutionCommand, type GetDurableExecutionCommandOutput, InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { type LocalDurableService, startLocalDurableService } from '../../local/durable/index.ts';
import { approvalHandler, callbackThenWaitHandler, failingHandler, longWaitHandler, stepsHandler, waitingHandler } from './durable-handlers.ts';

export interface DurableHarness {
  local: LocalDurableService;
  lambda: LambdaClient;
  /** Invoke with `InvocationType: 'Event'`; resolves with the new execution's ARN. */
  start(functionName: string, payload: unknown, name?: string): Promise<string>;
  /** Reads the execution until it is no longer RUNNING. */
  settled(arn: string): Promise<GetDurableExecutionCommandOutput>;
  close(): Promise<void>;
}

export async function startDurableHarness(): Promise<DurableHarness> {
  const local = await startLocalDurableService({
    functions: {
      steps: stepsHandler,
      failing: failingHandler,
      waiting: waitingHandler,
      'long-wait': longWaitHandler,
      approval: approvalHandler,
      'callback-then-wait': callbackThenWaitHandler,
    },
  });
  const lambda = new LambdaClient({
    endpoint: local.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const start = async (functionName: string, payload: unknown, name?: string) => {
    const output = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'Event',
        DurableExecutionName: name,
        Payload: new TextEncoder().encode(JSON.stringify(payload)),
      }),
    );
    if (!output.DurableExecutionArn) throw new Error('Invoke returned no DurableExecutionArn');
    return output.DurableExecutionArn;
  };
  const settled = async (arn: string) => {
    for (;;) {
      const execution = await lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
      if (execution.Status !== 'RUNNING') return execution;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return {
    local,
    lambda,
    start,
    settled,
    close: async () => {
      lambda.destroy();
      await local.close();
    },
  };
}
