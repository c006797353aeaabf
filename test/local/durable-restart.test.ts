import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DurableExecutionAlreadyStartedException,
  GetDurableExecutionCommand,
  type GetDurableExecutionCommandOutput,
  GetDurableExecutionStateCommand,
  InvokeCommand,
  LambdaClient,
  ListDurableExecutionsByFunctionCommand,
  type Operation,
  SendDurableExecutionCallbackHeartbeatCommand,
  SendDurableExecutionCallbackSuccessCommand,
} from '@aws-sdk/client-lambda';
import type { DurableLambdaHandler } from '@aws/durable-execution-sdk-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LocalDurableService, startLocalDurableService } from '../../local/durable/index.ts';
import {
  SPANNING_WAIT_SECONDS,
  approvalHandler,
  approvalRunsOf,
  callbackIdFor,
  flakyAttemptsOf,
  flakyStepHandler,
  stepsHandler,
  timeoutThenApprovalHandler,
  spanningWaitHandler,
} from './durable-handlers.ts';

const functions = {
  approval: approvalHandler,
  steps: stepsHandler,
  'spanning-wait': spanningWaitHandler,
  'timeout-then-approval': timeoutThenApprovalHandler,
  'flaky-step': flakyStepHandler,
};

/** One life of the service on a data directory, with a Lambda client on it. */
interface Life {
  local: LocalDurableService;
  lambda: LambdaClient;
  /** The statuses this life announced, by execution ARN. */
  announced: Map<string, string[]>;
  close(): Promise<void>;
}

async function live(dataDir: string, registered: Record<string, DurableLambdaHandler> = functions): Promise<Life> {
  const announced = new Map<string, string[]>();
  const local = await startLocalDurableService({
    functions: registered,
    dataDir,
    onStatusChange: ({ detail }) => announced.set(detail.durableExecutionArn, [...(announced.get(detail.durableExecutionArn) ?? []), detail.status]),
  });
  const lambda = new LambdaClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  return {
    local,
    lambda,
    announced,
    close: async () => {
      lambda.destroy();
      await local.close();
    },
  };
}

async function start(life: Life, functionName: string, payload: unknown, name: string): Promise<string> {
  const output = await life.lambda.send(
    new InvokeCommand({
      FunctionName: functionName,
      InvocationType: 'Event',
      DurableExecutionName: name,
      Payload: new TextEncoder().encode(JSON.stringify(payload)),
    }),
  );
  if (!output.DurableExecutionArn) throw new Error('Invoke returned no DurableExecutionArn');
  return output.DurableExecutionArn;
}

async function settled(life: Life, arn: string): Promise<GetDurableExecutionCommandOutput> {
  for (;;) {
    const execution = await life.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
    if (execution.Status !== 'RUNNING') return execution;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Reads the execution's operations until `ready` holds of them. */
async function operationsOnceReady(life: Life, arn: string, ready: (operations: Operation[]) => boolean): Promise<Operation[]> {
  for (;;) {
    const state = await life.lambda.send(new GetDurableExecutionStateCommand({ DurableExecutionArn: arn, CheckpointToken: 'any' }));
    if (ready(state.Operations ?? [])) return state.Operations ?? [];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the local durable service restarted on the same dataDir', () => {
  let dataDir: string;
  const lives: Life[] = [];
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'local-durable-'));
  });
  afterEach(async () => {
    for (const life of lives.splice(0)) await life.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const begin = async (registered?: Record<string, DurableLambdaHandler>) => {
    const life = await live(dataDir, registered);
    lives.push(life);
    return life;
  };
  const end = async (life: Life) => {
    lives.splice(lives.indexOf(life), 1);
    await life.close();
  };

  it('a callback created before the restart is answered by its id after it, and the execution ends without running its first step again', async () => {
    const first = await begin();
    const arn = await start(first, 'approval', { key: 'across-restart' }, 'approval-across-restart');
    const callbackId = await callbackIdFor('across-restart');
    // Suspended: both steps (the request and the callback's submitter) checkpointed, the callback waiting.
    await operationsOnceReady(
      first,
      arn,
      (operations) => operations.filter((operation) => operation.Type === 'STEP' && operation.Status === 'SUCCEEDED').length === 2,
    );
    expect(approvalRunsOf('across-restart').stepRuns).toBe(1);
    await end(first);

    const second = await begin();
    expect((await second.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }))).Status).toBe('RUNNING');
    const callback = (await operationsOnceReady(second, arn, () => true)).find((operation) => operation.Type === 'CALLBACK');
    expect(callback?.CallbackDetails?.CallbackId).toBe(callbackId);
    await second.lambda.send(new SendDurableExecutionCallbackHeartbeatCommand({ CallbackId: callbackId }));
    await second.lambda.send(new SendDurableExecutionCallbackSuccessCommand({ CallbackId: callbackId, Result: new TextEncoder().encode('"yes"') }));
    const execution = await settled(second, arn);
    expect(execution.Status).toBe('SUCCEEDED');
    expect(JSON.parse(execution.Result ?? '')).toEqual({ requestedBy: 'pipeline', approved: 'yes' });
    expect(approvalRunsOf('across-restart').stepRuns).toBe(1);
    // Started once, before the restart; ended once, after it.
    expect(first.announced.get(arn)).toEqual(['RUNNING']);
    expect(second.announced.get(arn)).toEqual(['SUCCEEDED']);
  });

  it('a wait that spans the restart ends at its original time, not a full wait after the restart', async () => {
    const first = await begin();
    const arn = await start(first, 'spanning-wait', {}, 'wait-across-restart');
    const [wait] = (await operationsOnceReady(first, arn, (operations) => operations.some((operation) => operation.Type === 'WAIT'))).filter(
      (operation) => operation.Type === 'WAIT',
    );
    const due = wait?.WaitDetails?.ScheduledEndTimestamp?.getTime() ?? 0;
    await end(first);
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const restartedAt = Date.now();
    const second = await begin();
    const execution = await settled(second, arn);
    expect(execution.Status).toBe('SUCCEEDED');
    const { before, after } = JSON.parse(execution.Result ?? '') as { before: number; after: number };
    const waited = SPANNING_WAIT_SECONDS * 1000;
    expect(after - before).toBeGreaterThanOrEqual(waited);
    expect(after).toBeGreaterThanOrEqual(due);
    // A wait begun again at the restart would end a whole wait after it; this one was 1.5 s in.
    expect(after - restartedAt).toBeLessThan(waited - 500);
    const [waitAfter] = (await operationsOnceReady(second, arn, () => true)).filter((operation) => operation.Type === 'WAIT');
    expect(waitAfter?.WaitDetails?.ScheduledEndTimestamp?.getTime()).toBe(due);
  });

  it('a step retry due after the restart runs at its original time, and the failed attempt is not run again', async () => {
    const first = await begin();
    const arn = await start(first, 'flaky-step', { key: 'retry-across-restart' }, 'retry-across-restart');
    const pending = (operations: Operation[]) => operations.find((operation) => operation.Type === 'STEP' && operation.Status === 'PENDING');
    const due =
      pending(await operationsOnceReady(first, arn, (operations) => pending(operations) !== undefined))?.StepDetails?.NextAttemptTimestamp?.getTime() ?? 0;
    await end(first);
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const restartedAt = Date.now();
    const second = await begin();
    const execution = await settled(second, arn);
    expect(execution.Status).toBe('SUCCEEDED');
    expect(execution.Result).toBe('2');
    const [failed, retried] = flakyAttemptsOf('retry-across-restart');
    expect(flakyAttemptsOf('retry-across-restart')).toHaveLength(2);
    expect(retried).toBeGreaterThanOrEqual(due);
    expect((retried ?? 0) - (failed ?? 0)).toBeGreaterThanOrEqual(SPANNING_WAIT_SECONDS * 1000 - 1000);
    // A retry scheduled again at the restart would run a whole delay after it.
    expect((retried ?? 0) - restartedAt).toBeLessThan(SPANNING_WAIT_SECONDS * 1000 - 500);
  });

  it('a callback that timed out before the restart is still timed out after it, and the execution goes on from there', async () => {
    const first = await begin();
    const arn = await start(first, 'timeout-then-approval', { key: 'timed-out-before-restart' }, 'timed-out-before-restart');
    const callbackId = await callbackIdFor('timed-out-before-restart');
    await operationsOnceReady(
      first,
      arn,
      (operations) => operations.filter((operation) => operation.Type === 'STEP' && operation.Status === 'SUCCEEDED').length === 1,
    );
    await end(first);

    const second = await begin();
    const callbacks = (await operationsOnceReady(second, arn, () => true)).filter((operation) => operation.Type === 'CALLBACK');
    expect(callbacks.map((operation) => [operation.Name ?? null, operation.Status])).toEqual([
      ['unanswered', 'TIMED_OUT'],
      [null, 'STARTED'],
    ]);
    await second.lambda.send(new SendDurableExecutionCallbackSuccessCommand({ CallbackId: callbackId, Result: new TextEncoder().encode('"go"') }));
    const execution = await settled(second, arn);
    expect(JSON.parse(execution.Result ?? '')).toEqual({ first: 'timed out', approved: 'go' });
  });

  it('no resumed handler runs before startLocalDurableService has returned, however many executions resume', async () => {
    const first = await begin();
    const arns = [
      await start(first, 'approval', { key: 'resumed-first' }, 'resumed-first'),
      await start(first, 'approval', { key: 'resumed-second' }, 'resumed-second'),
    ];
    const suspended = (operations: Operation[]) => operations.filter((operation) => operation.Type === 'STEP' && operation.Status === 'SUCCEEDED').length === 2;
    for (const arn of arns) await operationsOnceReady(first, arn, suspended);
    await end(first);

    // As the local stack does: the handler's surroundings are built after the service returns.
    let ready = false;
    const invokedBeforeReady: unknown[] = [];
    await begin({
      approval: (event, context) => {
        if (!ready) invokedBeforeReady.push(event);
        return approvalHandler(event, context);
      },
    });
    ready = true;
    const before = { first: approvalRunsOf('resumed-first').invocations, second: approvalRunsOf('resumed-second').invocations };
    await expect.poll(() => approvalRunsOf('resumed-second').invocations).toBeGreaterThan(before.second);
    await expect.poll(() => approvalRunsOf('resumed-first').invocations).toBeGreaterThan(before.first);
    expect(invokedBeforeReady).toEqual([]);
  });

  it('an ended execution keeps its status, input and result, and its name stays taken by that execution', async () => {
    const first = await begin();
    const arn = await start(first, 'steps', { value: 6 }, 'ended-before-restart');
    await settled(first, arn);
    await end(first);

    const second = await begin();
    const execution = await second.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
    expect(execution).toMatchObject({ Status: 'SUCCEEDED', InputPayload: '{"value":6}', DurableExecutionName: 'ended-before-restart' });
    expect(JSON.parse(execution.Result ?? '')).toEqual({ doubled: 12, plusOne: 13 });
    expect(execution.EndTimestamp).toBeInstanceOf(Date);
    const listed = await second.lambda.send(new ListDurableExecutionsByFunctionCommand({ FunctionName: 'steps', Statuses: ['SUCCEEDED'] }));
    expect(listed.DurableExecutions?.map((item) => item.DurableExecutionArn)).toEqual([arn]);
    expect(await start(second, 'steps', { value: 6 }, 'ended-before-restart')).toBe(arn);
    await expect(start(second, 'steps', { value: 7 }, 'ended-before-restart')).rejects.toBeInstanceOf(DurableExecutionAlreadyStartedException);
    const steps = (await operationsOnceReady(second, arn, () => true)).filter((operation) => operation.Type === 'STEP');
    expect(steps.map((operation) => [operation.Name, operation.StepDetails?.Result])).toEqual([
      ['double', '12'],
      ['add-one', '13'],
    ]);
  });

  it('a temporary file that a crash left mid-write is ignored: the last whole save is read', async () => {
    const first = await begin();
    const arn = await start(first, 'steps', { value: 1 }, 'crashed-mid-write');
    await settled(first, arn);
    await end(first);
    const folder = join(dataDir, 'steps');
    expect(readdirSync(folder)).toEqual(['crashed-mid-write.json']);
    writeFileSync(join(folder, 'crashed-mid-write.json.4242.7.tmp'), '{"arn": "trunc');

    const second = await begin();
    expect((await second.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }))).Status).toBe('SUCCEEDED');
  });
});
