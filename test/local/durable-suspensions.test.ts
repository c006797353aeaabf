import {
  CallbackTimeoutException,
  GetDurableExecutionCommand,
  SendDurableExecutionCallbackFailureCommand,
  SendDurableExecutionCallbackHeartbeatCommand,
  SendDurableExecutionCallbackSuccessCommand,
  StopDurableExecutionCommand,
} from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalRunsOf, callbackIdFor } from './durable-handlers.ts';
import { type DurableHarness, startDurableHarness } from './durable-harness.ts';

describe('waits, callbacks and stop on the local durable service', () => {
  let harness: DurableHarness;
  beforeAll(async () => {
    harness = await startDurableHarness();
  });
  afterAll(() => harness.close());

  const status = async (arn: string) => (await harness.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }))).Status;

  it('a one-second wait really waits: the step after it runs no sooner than a second after the one before', async () => {
    const arn = await harness.start('waiting', {}, 'waits-a-second');
    const execution = await harness.settled(arn);
    expect(execution.Status).toBe('SUCCEEDED');
    const { before, after } = JSON.parse(execution.Result ?? '') as { before: number; after: number };
    expect(after - before).toBeGreaterThanOrEqual(1000);
  });

  it('a callback suspends the execution until SendDurableExecutionCallbackSuccess answers it, and the run resumes by replay', async () => {
    const arn = await harness.start('approval', { key: 'approve' }, 'approve');
    const callbackId = await callbackIdFor('approve');
    expect(await status(arn)).toBe('RUNNING');
    await harness.lambda.send(new SendDurableExecutionCallbackHeartbeatCommand({ CallbackId: callbackId }));
    expect(await status(arn)).toBe('RUNNING');
    await harness.lambda.send(
      new SendDurableExecutionCallbackSuccessCommand({
        CallbackId: callbackId,
        Result: new TextEncoder().encode(JSON.stringify({ by: 'reviewer' })),
      }),
    );
    const execution = await harness.settled(arn);
    expect(execution.Status).toBe('SUCCEEDED');
    expect(JSON.parse(execution.Result ?? '')).toEqual({ requestedBy: 'pipeline', approved: { by: 'reviewer' } });
    // Resumed by a second invocation that replayed the checkpointed step instead of running it.
    expect(approvalRunsOf('approve').invocations).toBeGreaterThanOrEqual(2);
    expect(approvalRunsOf('approve').stepRuns).toBe(1);
  });

  it('a callback answered by SendDurableExecutionCallbackFailure fails the execution with that error', async () => {
    const arn = await harness.start('approval', { key: 'reject' }, 'reject');
    const callbackId = await callbackIdFor('reject');
    await harness.lambda.send(
      new SendDurableExecutionCallbackFailureCommand({
        CallbackId: callbackId,
        Error: { ErrorType: 'Rejected', ErrorMessage: 'the reviewer said no' },
      }),
    );
    const execution = await harness.settled(arn);
    expect(execution.Status).toBe('FAILED');
    expect(execution.Error?.ErrorMessage).toContain('the reviewer said no');
  });

  it('StopDurableExecution ends a waiting execution STOPPED, and its callbacks are gone', async () => {
    const arn = await harness.start('approval', { key: 'stopped' }, 'stopped');
    const callbackId = await callbackIdFor('stopped');
    const stopped = await harness.lambda.send(
      new StopDurableExecutionCommand({ DurableExecutionArn: arn, Error: { ErrorType: 'Cancelled', ErrorMessage: 'by the user' } }),
    );
    expect(stopped.StopTimestamp).toBeInstanceOf(Date);
    const execution = await harness.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
    expect(execution).toMatchObject({ Status: 'STOPPED', Error: { ErrorType: 'Cancelled', ErrorMessage: 'by the user' } });
    expect(execution.EndTimestamp).toBeInstanceOf(Date);
    // As Lambda's model says: the callback is closed, and stopping again changes nothing.
    await expect(
      harness.lambda.send(new SendDurableExecutionCallbackSuccessCommand({ CallbackId: callbackId, Result: new Uint8Array() })),
    ).rejects.toBeInstanceOf(CallbackTimeoutException);
    const again = await harness.lambda.send(new StopDurableExecutionCommand({ DurableExecutionArn: arn }));
    expect(again.StopTimestamp).toEqual(execution.EndTimestamp);
  });

  it('StopDurableExecution ends an execution in a long wait, whose timer then never resumes it', async () => {
    const arn = await harness.start('long-wait', {}, 'an-hour');
    await harness.lambda.send(new StopDurableExecutionCommand({ DurableExecutionArn: arn }));
    expect(await status(arn)).toBe('STOPPED');
  });
});
