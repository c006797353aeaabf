/**
 * Lambda's answer for a closed callback: SendDurableExecutionCallbackSuccess and Failure answer
 * CallbackTimeoutException when the callback has expired or was already closed. The durable
 * engine takes it as the Step Functions engine takes TaskTimedOut: the task is gone
 * (TaskGoneError), not an internal error. Through the unmodified LambdaClient on the local
 * durable service, which answers as Lambda's model does.
 */
import {
  CallbackTimeoutException,
  GetDurableExecutionStateCommand,
  InvalidParameterValueException,
  LambdaClient,
  SendDurableExecutionCallbackSuccessCommand,
} from '@aws-sdk/client-lambda';
import { describe, expect, it, vi } from 'vitest';
import { DurableFunctionEngine } from '../../lambdas/aws/durable-function-engine.ts';
import { TaskGoneError } from '../../lambdas/operations/ports.ts';
import { callbackIdFor } from '../local/durable-handlers.ts';
import { durableEngineFixture, functionArn } from './durable-engine-fixture.ts';

const durable = durableEngineFixture();

/** Reads the execution's operations until one of `type` has `status`. */
function waitForOperation(executionArn: string, type: string, status: string): Promise<void> {
  return vi.waitFor(
    async () => {
      const state = await durable.harness.lambda.send(
        new GetDurableExecutionStateCommand({ DurableExecutionArn: executionArn, CheckpointToken: undefined as never }),
      );
      expect(state.Operations?.find((operation) => operation.Type === type)?.Status).toBe(status);
    },
    { interval: 100, timeout: 10_000 },
  );
}

describe("Lambda's answer for a closed callback, through the durable engine", () => {
  it('a callback that timed out while its execution runs on is TaskGoneError, as TaskTimedOut is, for success and failure alike', async () => {
    const { executionArn } = await durable.engine.start({
      stateMachineArn: functionArn('callback-then-wait'),
      name: 'engine-expired',
      input: { key: 'engine-expired', timeoutSeconds: 1 },
    });
    const callbackId = await callbackIdFor('engine-expired');
    await waitForOperation(executionArn, 'CALLBACK', 'TIMED_OUT');
    await waitForOperation(executionArn, 'WAIT', 'STARTED');
    // What Lambda answers, as the client raises it.
    await expect(
      durable.harness.lambda.send(new SendDurableExecutionCallbackSuccessCommand({ CallbackId: callbackId, Result: new Uint8Array() })),
    ).rejects.toBeInstanceOf(CallbackTimeoutException);
    await expect(durable.engine.sendTaskSuccess(callbackId, { approved: true })).rejects.toBeInstanceOf(TaskGoneError);
    await expect(durable.engine.sendTaskFailure(callbackId, { error: 'Mcp.InputDeclined', cause: 'late' })).rejects.toBeInstanceOf(TaskGoneError);
    expect((await durable.engine.describe(executionArn)).status).toBe('RUNNING');
    await durable.engine.stop(executionArn, { error: 'Cancelled', cause: 'test over' });
  });

  it('a callback answered already is TaskGoneError, and so is one of an execution that was stopped', async () => {
    const { executionArn } = await durable.engine.start({
      stateMachineArn: functionArn('callback-then-wait'),
      name: 'engine-answered',
      input: { key: 'engine-answered', timeoutSeconds: 3600 },
    });
    const callbackId = await callbackIdFor('engine-answered');
    await durable.engine.sendTaskSuccess(callbackId, { approved: true });
    await expect(durable.engine.sendTaskSuccess(callbackId, { approved: false })).rejects.toBeInstanceOf(TaskGoneError);
    // Resumed by the answer, the run goes on to its wait before it is stopped.
    await waitForOperation(executionArn, 'WAIT', 'STARTED');
    await durable.engine.stop(executionArn, { error: 'Cancelled', cause: 'test over' });
    await expect(durable.engine.sendTaskFailure(callbackId, { error: 'E', cause: 'c' })).rejects.toBeInstanceOf(TaskGoneError);
    // Stopping it again changes nothing, as the port asks.
    await durable.engine.stop(executionArn, { error: 'Cancelled', cause: 'again' });
    expect(await durable.engine.describe(executionArn)).toMatchObject({ status: 'ABORTED', error: 'Cancelled', cause: 'test over' });
  });

  it('should Lambda refuse stopping an execution as an invalid parameter, an execution that has ended is stopped all the same, a running one is not', async () => {
    // A client whose StopDurableExecution is refused, as a fault injected into its stack.
    const refusing = new LambdaClient({
      endpoint: durable.harness.local.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    refusing.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'StopDurableExecutionCommand') return next(args);
        throw new InvalidParameterValueException({ message: 'Execution is not running', $metadata: { httpStatusCode: 400 } });
      },
      { step: 'initialize', name: 'refuseStop' },
    );
    const refused = new DurableFunctionEngine(refusing);
    try {
      const ended = await durable.engine.start({ stateMachineArn: functionArn('steps'), name: 'refused-stop-ended', input: { value: 2 } });
      await vi.waitFor(async () => expect((await durable.engine.describe(ended.executionArn)).status).toBe('SUCCEEDED'), { interval: 50, timeout: 10_000 });
      await refused.stop(ended.executionArn, { error: 'Cancelled', cause: 'late' });
      expect((await durable.engine.describe(ended.executionArn)).status).toBe('SUCCEEDED');

      const running = await durable.engine.start({ stateMachineArn: functionArn('long-wait'), name: 'refused-stop-running', input: {} });
      await expect(refused.stop(running.executionArn, { error: 'Cancelled', cause: 'now' })).rejects.toBeInstanceOf(InvalidParameterValueException);
      await durable.engine.stop(running.executionArn, { error: 'Cancelled', cause: 'test over' });
    } finally {
      refusing.destroy();
    }
  });
});
