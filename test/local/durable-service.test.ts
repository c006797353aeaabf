import {
  DurableExecutionAlreadyStartedException,
  GetDurableExecutionCommand,
  GetDurableExecutionStateCommand,
  InvalidParameterValueException,
  InvokeCommand,
  ListDurableExecutionsByFunctionCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DurableHarness, startDurableHarness } from './durable-harness.ts';

describe('the local durable service, through the unmodified Lambda client', () => {
  let harness: DurableHarness;
  beforeAll(async () => {
    harness = await startDurableHarness();
  });
  afterAll(() => harness.close());

  it('starts an execution with Invoke and a DurableExecutionName, and GetDurableExecution reports its result', async () => {
    const arn = await harness.start('steps', { value: 20 }, 'steps-one');
    expect(arn).toMatch(/^arn:aws:lambda:us-east-1:000000000000:function:steps:\$LATEST\/durable-execution\/steps-one\/[\w-]+$/);
    const execution = await harness.settled(arn);
    expect(execution).toMatchObject({
      DurableExecutionArn: arn,
      DurableExecutionName: 'steps-one',
      FunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:steps',
      Status: 'SUCCEEDED',
      InputPayload: JSON.stringify({ value: 20 }),
    });
    expect(JSON.parse(execution.Result ?? '')).toEqual({ doubled: 40, plusOne: 41 });
    expect(execution.StartTimestamp).toBeInstanceOf(Date);
    expect(execution.EndTimestamp).toBeInstanceOf(Date);
  });

  it('a second Invoke with the same name and payload is the same execution; another payload is DurableExecutionAlreadyStartedException', async () => {
    const first = await harness.start('steps', { value: 1 }, 'steps-twice');
    const again = await harness.start('steps', { value: 1 }, 'steps-twice');
    expect(again).toBe(first);
    await expect(harness.start('steps', { value: 2 }, 'steps-twice')).rejects.toBeInstanceOf(DurableExecutionAlreadyStartedException);
    // Once the execution has ended, the same start still names it.
    await harness.settled(first);
    expect(await harness.start('steps', { value: 1 }, 'steps-twice')).toBe(first);
  });

  it('a synchronous Invoke answers with the execution result', async () => {
    const output = await harness.lambda.send(new InvokeCommand({ FunctionName: 'steps', Payload: new TextEncoder().encode('{"value":3}') }));
    expect(output.StatusCode).toBe(200);
    expect(output.FunctionError).toBeUndefined();
    expect(JSON.parse(new TextDecoder().decode(output.Payload))).toEqual({ doubled: 6, plusOne: 7 });
    expect(output.DurableExecutionArn).toContain('function:steps:$LATEST/durable-execution/');
  });

  it('a handler that throws ends the execution FAILED with its error', async () => {
    const arn = await harness.start('failing', {}, 'fails-once');
    const execution = await harness.settled(arn);
    expect(execution.Status).toBe('FAILED');
    expect(execution.Error?.ErrorMessage).toBe('the dataset could not be read');
    expect(execution.Result).toBeUndefined();
  });

  it('ListDurableExecutionsByFunction lists a function executions, filtered by status and name', async () => {
    const arn = await harness.start('steps', { value: 5 }, 'listed');
    await harness.settled(arn);
    const all = await harness.lambda.send(new ListDurableExecutionsByFunctionCommand({ FunctionName: 'steps' }));
    expect(all.DurableExecutions?.map((execution) => execution.DurableExecutionArn)).toContain(arn);
    expect(all.DurableExecutions?.every((execution) => execution.FunctionArn?.endsWith(':function:steps'))).toBe(true);
    const named = await harness.lambda.send(
      new ListDurableExecutionsByFunctionCommand({ FunctionName: 'steps', DurableExecutionName: 'listed', Statuses: ['SUCCEEDED'] }),
    );
    expect(named.DurableExecutions).toEqual([expect.objectContaining({ DurableExecutionArn: arn, DurableExecutionName: 'listed', Status: 'SUCCEEDED' })]);
    const running = await harness.lambda.send(
      new ListDurableExecutionsByFunctionCommand({ FunctionName: 'steps', DurableExecutionName: 'listed', Statuses: ['RUNNING'] }),
    );
    expect(running.DurableExecutions).toEqual([]);
  });

  it('an unknown function or execution is ResourceNotFoundException', async () => {
    await expect(harness.start('no-such-function', {})).rejects.toBeInstanceOf(ResourceNotFoundException);
    const arn = 'arn:aws:lambda:us-east-1:000000000000:function:steps:$LATEST/durable-execution/none/none';
    await expect(harness.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }))).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it('an execution name outside [a-zA-Z0-9-_]{1,64} is InvalidParameterValueException', async () => {
    await expect(harness.start('steps', { value: 1 }, 'not a name')).rejects.toBeInstanceOf(InvalidParameterValueException);
    await expect(harness.start('steps', { value: 1 }, 'n'.repeat(65))).rejects.toBeInstanceOf(InvalidParameterValueException);
  });

  it('GetDurableExecutionState returns the checkpointed operations: the execution and each step with its result', async () => {
    const arn = await harness.start('steps', { value: 4 }, 'state-read');
    await harness.settled(arn);
    const state = await harness.lambda.send(new GetDurableExecutionStateCommand({ DurableExecutionArn: arn, CheckpointToken: 'any' }));
    const operations = state.Operations ?? [];
    expect(operations[0]).toMatchObject({ Type: 'EXECUTION', ExecutionDetails: { InputPayload: '{"value":4}' } });
    expect(operations.filter((operation) => operation.Type === 'STEP')).toEqual([
      expect.objectContaining({ Name: 'double', Status: 'SUCCEEDED', StepDetails: expect.objectContaining({ Result: '8' }) }),
      expect.objectContaining({ Name: 'add-one', Status: 'SUCCEEDED', StepDetails: expect.objectContaining({ Result: '9' }) }),
    ]);
    expect(operations[0]?.StartTimestamp).toBeInstanceOf(Date);
  });
});
