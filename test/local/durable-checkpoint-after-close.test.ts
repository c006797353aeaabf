/**
 * A handler still running when the local durable service closes (the stack stopping, or
 * restarting with --data) checkpoints once more, to a port no longer open. The close was the
 * service's own doing, so the refusal is expected: the SDK's "Failed to checkpoint" ERROR
 * line, with its stack, is not printed for it.
 */
import { type DurableContext, type DurableLambdaHandler, withDurableExecution } from '@aws/durable-execution-sdk-js';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, expect, it } from 'vitest';
import { startLocalDurableService } from '../../local/durable/index.ts';
import { captureLogs } from '../support/log-capture.ts';

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

/** A step held open until the test has closed the service; its result is then checkpointed. */
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

afterAll(() => openGate());

it('a checkpoint after the service closed is refused, and the refusal is not logged', async () => {
  // A handler still running once the close's grace for the invocations under way is over.
  const local = await startLocalDurableService({ functions: { held }, handlerGraceMs: 100 });
  const lambda = new LambdaClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  try {
    await lambda.send(new InvokeCommand({ FunctionName: 'held', InvocationType: 'Event', Payload: new TextEncoder().encode('{}') }));
    await running;
  } finally {
    lambda.destroy();
  }
  const logs = captureLogs(/^Failed to checkpoint/);
  await local.close();
  openGate();
  await ended;
  expect(logs.entries).toEqual([]);
});
