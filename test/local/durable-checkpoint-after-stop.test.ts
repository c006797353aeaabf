/**
 * A handler still running when its execution is stopped checkpoints once more, and the local
 * durable service refuses it as Lambda does (InvalidParameterValueException, not running). The
 * stop was the service's own doing, so the refusal is expected: the SDK's "Failed to
 * checkpoint" ERROR line, with its stack, is not printed for it.
 */
import { type DurableContext, type DurableLambdaHandler, withDurableExecution } from '@aws/durable-execution-sdk-js';
import { GetDurableExecutionCommand, InvokeCommand, LambdaClient, StopDurableExecutionCommand } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { type LocalDurableService, startLocalDurableService } from '../../local/durable/index.ts';

let openGate: () => void = () => undefined;
const gate = new Promise<void>((resolve) => {
  openGate = resolve;
});
let stepRunning: () => void = () => undefined;
const running = new Promise<void>((resolve) => {
  stepRunning = resolve;
});
let invocationEnded: () => void = () => undefined;
const ended = new Promise<void>((resolve) => {
  invocationEnded = resolve;
});

/** A step held open until the test has stopped the execution; its result is then checkpointed. */
const heldStep = withDurableExecution(async (_event: unknown, context: DurableContext) => {
  await context.step('held', async () => {
    stepRunning();
    await gate;
    return 'done';
  });
  return 'done';
});
const held: DurableLambdaHandler = async (event, context) => {
  try {
    return await heldStep(event, context);
  } finally {
    invocationEnded();
  }
};

let local: LocalDurableService;
let lambda: LambdaClient;
beforeAll(async () => {
  local = await startLocalDurableService({ functions: { held } });
  lambda = new LambdaClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
});
afterAll(async () => {
  openGate();
  lambda?.destroy();
  await local?.close();
});

it('a checkpoint after StopDurableExecution is refused, and the refusal of a stop the service made is not logged', async () => {
  const checkpoint = vi.spyOn(local.service, 'checkpoint');
  const started = await lambda.send(new InvokeCommand({ FunctionName: 'held', InvocationType: 'Event', Payload: new TextEncoder().encode('{}') }));
  const arn = started.DurableExecutionArn!;
  await running;
  const written: string[] = [];
  const results: typeof checkpoint.mock.results = [];
  const capture = (chunk: unknown) => {
    written.push(String(chunk));
    return true;
  };
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await lambda.send(new StopDurableExecutionCommand({ DurableExecutionArn: arn, Error: { ErrorType: 'Cancelled', ErrorMessage: 'stopped by the test' } }));
    openGate();
    await ended;
  } finally {
    // Read before the restore, which clears them.
    results.push(...checkpoint.mock.results);
    stdout.mockRestore();
    stderr.mockRestore();
    checkpoint.mockRestore();
  }
  // Lambda's refusal of what the handler checkpointed after the stop (the step's start or its result).
  const outcomes = await Promise.all(
    results.map((result) => (result.type === 'throw' ? result.value : Promise.resolve(result.value).catch((error: unknown) => error))),
  );
  expect(outcomes).toContainEqual(expect.objectContaining({ type: 'InvalidParameterValueException', message: 'Durable execution is not running: STOPPED' }));
  expect(written.filter((line) => line.includes('Failed to checkpoint'))).toEqual([]);
  const execution = await lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
  expect(execution.Status).toBe('STOPPED');
});
