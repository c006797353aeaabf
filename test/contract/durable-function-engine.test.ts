/**
 * The durable-function engine against the local durable service, through the unmodified
 * LambdaClient: what the core relies on from start, describe, stop and the callback calls.
 */
import { describe, expect, it } from 'vitest';
import { ExecutionNotFoundError, type ExecutionSnapshot, TaskGoneError } from '../../lambdas/operations/ports.ts';
import { callbackIdFor } from '../local/durable-handlers.ts';
import { durableEngineFixture, functionArn } from './durable-engine-fixture.ts';

const durable = durableEngineFixture();

async function settled(arn: string): Promise<ExecutionSnapshot> {
  for (;;) {
    const snapshot = await durable.engine.describe(arn);
    if (snapshot.status !== 'RUNNING') return snapshot;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('DurableFunctionEngine over the local durable service', () => {
  it('starts an execution that is described through to SUCCEEDED with its output and input', async () => {
    const { executionArn } = await durable.engine.start({ stateMachineArn: functionArn('steps'), name: 'steps-1', input: { value: 4 } });
    expect(executionArn).toMatch(/:function:steps:\$LATEST\/durable-execution\/steps-1\/[a-zA-Z0-9_-]+$/);
    const snapshot = await settled(executionArn);
    expect(snapshot).toMatchObject({ executionArn, status: 'SUCCEEDED', output: { doubled: 8, plusOne: 9 }, input: { value: 4 } });
    expect(snapshot.startDate).toBeInstanceOf(Date);
    expect(snapshot.stopDate).toBeInstanceOf(Date);
  });

  it('describes a failed execution as FAILED with its error and cause', async () => {
    const { executionArn } = await durable.engine.start({ stateMachineArn: functionArn('failing'), name: 'failing-1', input: {} });
    const snapshot = await settled(executionArn);
    expect(snapshot.status).toBe('FAILED');
    expect(snapshot.error).toBe('Error');
    expect(snapshot.cause).toBe('the dataset could not be read');
  });

  it('starting the same name with the same input twice is one execution', async () => {
    const first = await durable.engine.start({ stateMachineArn: functionArn('long-wait'), name: 'same-1', input: { a: 1 } });
    const second = await durable.engine.start({ stateMachineArn: functionArn('long-wait'), name: 'same-1', input: { a: 1 } });
    expect(second.executionArn).toBe(first.executionArn);
    await durable.engine.stop(first.executionArn, { error: 'Cancelled', cause: 'test over' });
  });

  it('a start of the same name with another input answers the existing execution, as ExecutionAlreadyExists is mapped', async () => {
    const first = await durable.engine.start({ stateMachineArn: functionArn('long-wait'), name: 'conflict-1', input: { a: 1, b: 2 } });
    const second = await durable.engine.start({ stateMachineArn: functionArn('long-wait'), name: 'conflict-1', input: { b: 2, a: 1 } });
    expect(second.executionArn).toBe(first.executionArn);
    await durable.engine.stop(first.executionArn, { error: 'Cancelled', cause: 'test over' });
  });

  it('stops a running execution: it is ABORTED with the reason', async () => {
    const { executionArn } = await durable.engine.start({ stateMachineArn: functionArn('long-wait'), name: 'stop-1', input: {} });
    await durable.engine.stop(executionArn, { error: 'Cancelled', cause: 'the client cancelled' });
    const snapshot = await durable.engine.describe(executionArn);
    expect(snapshot).toMatchObject({ status: 'ABORTED' });
    expect(snapshot.stopDate).toBeInstanceOf(Date);
  });

  it('stopping a finished execution is not an error and changes nothing', async () => {
    const { executionArn } = await durable.engine.start({ stateMachineArn: functionArn('steps'), name: 'stop-finished', input: { value: 1 } });
    await settled(executionArn);
    await durable.engine.stop(executionArn, { error: 'Cancelled', cause: 'too late' });
    expect((await durable.engine.describe(executionArn)).status).toBe('SUCCEEDED');
  });

  it('stopping or describing an execution that never started is ExecutionNotFoundError', async () => {
    const missing = `${functionArn('steps')}/durable-execution/never/0000`;
    await expect(durable.engine.stop(missing, { error: 'Cancelled', cause: 'x' })).rejects.toBeInstanceOf(ExecutionNotFoundError);
    await expect(durable.engine.describe(missing)).rejects.toBeInstanceOf(ExecutionNotFoundError);
  });

  it('a callback answered through sendTaskSuccess resumes the execution with the answer', async () => {
    const { executionArn } = await durable.engine.start({ stateMachineArn: functionArn('approval'), name: 'approve-yes', input: { key: 'engine-yes' } });
    await durable.engine.sendTaskSuccess(await callbackIdFor('engine-yes'), { approved: true });
    expect(await settled(executionArn)).toMatchObject({ status: 'SUCCEEDED', output: { requestedBy: 'pipeline', approved: { approved: true } } });
  });

  it('a callback answered through sendTaskFailure fails the execution with that error, and answering it again is TaskGoneError', async () => {
    const { executionArn } = await durable.engine.start({ stateMachineArn: functionArn('approval'), name: 'approve-no', input: { key: 'engine-no' } });
    const callbackId = await callbackIdFor('engine-no');
    await durable.engine.sendTaskFailure(callbackId, { error: 'Rejected', cause: 'not today' });
    const snapshot = await settled(executionArn);
    expect(snapshot.status).toBe('FAILED');
    expect(snapshot.cause).toContain('not today');
    await expect(durable.engine.sendTaskSuccess(callbackId, { approved: true })).rejects.toBeInstanceOf(TaskGoneError);
  });

  it('a callback id that names no callback is TaskGoneError', async () => {
    await expect(durable.engine.sendTaskFailure('bm90LWEtY2FsbGJhY2s', { error: 'E', cause: 'c' })).rejects.toBeInstanceOf(TaskGoneError);
  });

  it('describes and stops an execution by the ARN executionArnFor gave before the start answered', async () => {
    const recorded = durable.engine.executionArnFor(functionArn('long-wait'), 'by-name-1');
    await expect(durable.engine.stop(recorded, { error: 'Cancelled', cause: 'x' })).rejects.toBeInstanceOf(ExecutionNotFoundError);
    const { executionArn } = await durable.engine.start({ stateMachineArn: functionArn('long-wait'), name: 'by-name-1', input: {} });
    expect(recorded).not.toBe(executionArn);
    expect(await durable.engine.describe(recorded)).toMatchObject({ status: 'RUNNING', input: {} });
    await durable.engine.stop(recorded, { error: 'Cancelled', cause: 'the client cancelled' });
    expect((await durable.engine.describe(executionArn)).status).toBe('ABORTED');
  });

  it('a synchronous start runs the execution to its end and answers its output', async () => {
    const snapshot = await durable.engine.startSync({ stateMachineArn: functionArn('steps'), name: 'sync-ok', input: { value: 2 } });
    expect(snapshot).toMatchObject({ status: 'SUCCEEDED', output: { doubled: 4, plusOne: 5 } });
    expect((await durable.engine.describe(snapshot.executionArn)).status).toBe('SUCCEEDED');
  });

  it('a synchronous start of a failing execution answers FAILED with its error and cause', async () => {
    const snapshot = await durable.engine.startSync({ stateMachineArn: functionArn('failing'), name: 'sync-fail', input: {} });
    expect(snapshot).toMatchObject({ status: 'FAILED', cause: 'the dataset could not be read' });
  });
});
