import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  GetExecutionHistoryCommand,
  InvalidArn,
  InvalidExecutionInput,
  InvalidName,
  InvalidToken,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
  StartSyncExecutionCommand,
  StateMachineDoesNotExist,
  StateMachineTypeNotSupported,
  StopExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
  type DescribeExecutionCommandOutput,
} from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEventBus } from '../../local/event-bus.ts';
import { startSfnFacade, type ExecutionStatusChangeEvent, type SfnFacade, type SfnFacadeOptions, type WorkerHandler } from '../../local/sfn-facade.ts';

const SECRET = 'tool-argument-that-must-not-be-logged';

function definition(states: Record<string, unknown>, startAt = Object.keys(states)[0]!): string {
  return JSON.stringify({ StartAt: startAt, States: states });
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

class ValidationError extends Error {
  override name = 'ValidationError';
}

const started: SfnFacade[] = [];
const logLines: string[] = [];
const logger = { warn: (...args: unknown[]) => logLines.push(args.join(' ')), error: (...args: unknown[]) => logLines.push(args.join(' ')) };

afterEach(async () => {
  await Promise.all(started.splice(0).map((facade) => facade.close()));
  expect(logLines.join('\n')).not.toContain(SECRET);
  logLines.length = 0;
});

async function start(options: Partial<SfnFacadeOptions> & Pick<SfnFacadeOptions, 'stateMachines'>) {
  const facade = await startSfnFacade({ resolveWorker: () => async (event) => event, logger, ...options });
  started.push(facade);
  const client = new SFNClient({
    region: 'us-east-1',
    endpoint: facade.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    // StartSyncExecution's endpoint trait would otherwise send it to `sync-127.0.0.1`.
    disableHostPrefix: true,
  });
  const describeUntilDone = async (executionArn: string, timeoutMs = 10_000): Promise<DescribeExecutionCommandOutput> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const described = await client.send(new DescribeExecutionCommand({ executionArn }));
      if (described.status !== 'RUNNING') return described;
      if (Date.now() > deadline) throw new Error(`${executionArn} still RUNNING after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { facade, client, describeUntilDone };
}

const input = (value: unknown) => JSON.stringify(value);

describe('local Step Functions facade, driven by the real SFNClient', () => {
  it('runs a worker and describes the execution as SUCCEEDED with its output', async () => {
    const calls: unknown[] = [];
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'echo',
          workflowType: 'STANDARD',
          definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_echo}', ResultPath: '$.result', End: true } }),
        },
      ],
      resolveWorker: (worker) => async (event) => {
        calls.push({ worker, event });
        return { echoed: (event as { arguments: unknown }).arguments };
      },
    });
    const startedAt = Date.now();
    const { executionArn, startDate } = await client.send(
      new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('echo'), name: 'op-1', input: input({ arguments: { q: SECRET } }) }),
    );
    expect(executionArn).toBe('arn:aws:states:us-east-1:000000000000:execution:echo:op-1');
    expect(startDate).toBeInstanceOf(Date);
    expect(Math.abs(startDate!.getTime() - startedAt)).toBeLessThan(5000);

    const described = await describeUntilDone(executionArn!);
    expect(described).toMatchObject({
      executionArn,
      stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:echo',
      name: 'op-1',
      status: 'SUCCEEDED',
      input: input({ arguments: { q: SECRET } }),
      inputDetails: { included: true },
      outputDetails: { included: true },
    });
    expect(JSON.parse(described.output!)).toEqual({ arguments: { q: SECRET }, result: { echoed: { q: SECRET } } });
    expect(described.stopDate!.getTime()).toBeGreaterThanOrEqual(described.startDate!.getTime());
    expect(described.error).toBeUndefined();
    expect(calls).toEqual([{ worker: 'echo', event: { arguments: { q: SECRET } } }]);
  });

  it('StartExecution is idempotent for the same name and input while the execution runs; closed or different input is ExecutionAlreadyExists', async () => {
    const gate = deferred();
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [{ name: 'slow', workflowType: 'STANDARD', definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_slow}', End: true } }) }],
      resolveWorker: () => async () => {
        await gate.promise;
        return { done: true };
      },
    });
    const request = { stateMachineArn: facade.stateMachineArn('slow'), name: 'same-name', input: input({ a: 1 }) };
    const first = await client.send(new StartExecutionCommand(request));
    const again = await client.send(new StartExecutionCommand(request));
    expect(again.executionArn).toBe(first.executionArn);
    expect(again.startDate!.getTime()).toBe(first.startDate!.getTime());

    await expect(client.send(new StartExecutionCommand({ ...request, input: input({ a: 2 }) }))).rejects.toBeInstanceOf(ExecutionAlreadyExists);

    gate.resolve();
    expect((await describeUntilDone(first.executionArn!)).status).toBe('SUCCEEDED');
    // "If the execution is closed or if the input is different, it returns a 400 ExecutionAlreadyExists error."
    await expect(client.send(new StartExecutionCommand(request))).rejects.toBeInstanceOf(ExecutionAlreadyExists);
  });

  it('answers bad requests with the typed errors of the service, never crashing', async () => {
    const { facade, client } = await start({
      stateMachines: [{ name: 'm', workflowType: 'STANDARD', definitionText: definition({ Done: { Type: 'Succeed' } }) }],
    });
    const machineArn = facade.stateMachineArn('m');
    await expect(
      client.send(new DescribeExecutionCommand({ executionArn: 'arn:aws:states:us-east-1:000000000000:execution:m:nope' })),
    ).rejects.toBeInstanceOf(ExecutionDoesNotExist);
    await expect(client.send(new DescribeExecutionCommand({ executionArn: 'not-an-arn' }))).rejects.toBeInstanceOf(InvalidArn);
    await expect(
      client.send(new StartExecutionCommand({ stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:missing' })),
    ).rejects.toBeInstanceOf(StateMachineDoesNotExist);
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: machineArn, name: 'has space' }))).rejects.toBeInstanceOf(InvalidName);
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: machineArn, name: 'x'.repeat(81) }))).rejects.toBeInstanceOf(InvalidName);
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: machineArn, input: '{not json' }))).rejects.toBeInstanceOf(
      InvalidExecutionInput,
    );
    await expect(client.send(new StartSyncExecutionCommand({ stateMachineArn: machineArn }))).rejects.toBeInstanceOf(
      StateMachineTypeNotSupported,
    );

    const post = (target: string, body: string) =>
      fetch(facade.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
        body,
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { __type: string; message: string } }));
    expect(await post('AWSStepFunctions.DeleteStateMachine', '{}')).toMatchObject({ status: 400, body: { __type: 'UnknownOperationException' } });
    expect(await post('AWSStepFunctions.toString', '{}')).toMatchObject({ status: 400, body: { __type: 'UnknownOperationException' } });
    expect(await post('AWSStepFunctions.StartExecution', '{"stateMachineArn":')).toMatchObject({
      status: 400,
      body: { __type: 'SerializationException' },
    });
    expect(await post('AWSStepFunctions.DescribeExecution', '{}')).toMatchObject({ status: 400, body: { __type: 'ValidationException' } });
    expect(await post('AWSStepFunctions.DescribeExecution', '[]')).toMatchObject({ status: 400, body: { __type: 'SerializationException' } });

    // Still serving after all of that.
    const ok = await client.send(new StartExecutionCommand({ stateMachineArn: machineArn }));
    expect(ok.executionArn).toMatch(/^arn:aws:states:us-east-1:000000000000:execution:m:[0-9a-f-]{36}$/);
  });

  it('a worker that throws fails the execution the way a Lambda error does: Error = errorType, Cause = {errorType, errorMessage}', async () => {
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [{ name: 'bad', workflowType: 'STANDARD', definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_bad}', End: true } }) }],
      resolveWorker: () => async () => {
        throw new ValidationError('quantity must be positive');
      },
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('bad'), input: input({ q: SECRET }) }));
    const described = await describeUntilDone(executionArn!);
    expect(described.status).toBe('FAILED');
    expect(described.error).toBe('ValidationError');
    expect(JSON.parse(described.cause!)).toEqual({ errorType: 'ValidationError', errorMessage: 'quantity must be positive' });
    expect(described.output).toBeUndefined();
  });

  it('Retry and Catch match on the worker error name', async () => {
    let attempts = 0;
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'guarded',
          workflowType: 'STANDARD',
          definitionText: definition({
            Flaky: {
              Type: 'Task',
              Resource: '${Worker_flaky}',
              Retry: [{ ErrorEquals: ['Throttled'], IntervalSeconds: 1, MaxAttempts: 1 }],
              Next: 'Invalid',
            },
            Invalid: {
              Type: 'Task',
              Resource: '${Worker_invalid}',
              Catch: [
                { ErrorEquals: ['Other'], Next: 'Wrong' },
                { ErrorEquals: ['ValidationError'], ResultPath: '$.failure', Next: 'Handled' },
              ],
              End: true,
            },
            Wrong: { Type: 'Fail', Error: 'WrongCatcher' },
            Handled: { Type: 'Pass', End: true },
          }),
        },
      ],
      resolveWorker: (worker) =>
        worker === 'flaky'
          ? async () => {
              attempts++;
              if (attempts === 1) throw Object.assign(new Error('slow down'), { name: 'Throttled' });
              return { ok: true };
            }
          : async () => {
              throw new ValidationError('bad input');
            },
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('guarded') }));
    const described = await describeUntilDone(executionArn!);
    expect(described.status).toBe('SUCCEEDED');
    expect(attempts).toBe(2);
    const output = JSON.parse(described.output!) as { ok: boolean; failure: { Error: string; Cause: string } };
    expect(output.ok).toBe(true);
    expect(output.failure.Error).toBe('ValidationError');
    expect(JSON.parse(output.failure.Cause)).toEqual({ errorType: 'ValidationError', errorMessage: 'bad input' });
  });

  it('a Fail state fails the execution with its Error and Cause', async () => {
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'refuse',
          workflowType: 'STANDARD',
          definitionText: definition({ Refuse: { Type: 'Fail', Error: 'Mcp.ProtocolError', Cause: '{"code":-32602,"message":"bad"}' } }),
        },
      ],
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('refuse') }));
    expect(await describeUntilDone(executionArn!)).toMatchObject({
      status: 'FAILED',
      error: 'Mcp.ProtocolError',
      cause: '{"code":-32602,"message":"bad"}',
    });
  });

  it('StopExecution aborts a 30-second Wait at once: ABORTED with the given error and cause', async () => {
    const { facade, client } = await start({
      stateMachines: [
        {
          name: 'waiter',
          workflowType: 'STANDARD',
          definitionText: definition({ Sleep: { Type: 'Wait', Seconds: 30, Next: 'After' }, After: { Type: 'Task', Resource: '${Worker_after}', End: true } }),
        },
      ],
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('waiter'), name: 'to-stop' }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stoppedAt = Date.now();
    const { stopDate } = await client.send(new StopExecutionCommand({ executionArn, error: 'Mcp.Cancelled', cause: 'client cancelled' }));
    expect(stopDate).toBeInstanceOf(Date);
    const described = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(described).toMatchObject({ status: 'ABORTED', error: 'Mcp.Cancelled', cause: 'client cancelled' });
    expect(Date.now() - stoppedAt).toBeLessThan(5000);

    const { events } = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    expect(events!.at(-1)).toMatchObject({ type: 'ExecutionAborted', executionAbortedEventDetails: { error: 'Mcp.Cancelled', cause: 'client cancelled' } });
    expect(events!.map((e) => e.type)).not.toContain('WaitStateExited');

    // Stopping again changes nothing.
    const again = await client.send(new StopExecutionCommand({ executionArn, error: 'Other' }));
    expect(again.stopDate!.getTime()).toBe(stopDate!.getTime());
    expect((await client.send(new DescribeExecutionCommand({ executionArn }))).error).toBe('Mcp.Cancelled');
  });

  it('a stopped run really stops: the state after the Wait never runs', async () => {
    let afterCalls = 0;
    const { facade, client } = await start({
      // Scaled: the 30 s Wait lasts 300 ms, so a run that kept going would reach "After" well within the test.
      waitTimeScale: 0.01,
      stateMachines: [
        {
          name: 'waiter',
          workflowType: 'STANDARD',
          definitionText: definition({ Sleep: { Type: 'Wait', Seconds: 30, Next: 'After' }, After: { Type: 'Task', Resource: '${Worker_after}', End: true } }),
        },
      ],
      resolveWorker: () => async () => {
        afterCalls++;
        return {};
      },
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('waiter') }));
    await client.send(new StopExecutionCommand({ executionArn }));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(afterCalls).toBe(0);
    const described = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(described.status).toBe('ABORTED');
    // "If not provided", AWS leaves error and cause out.
    expect(described.error).toBeUndefined();
    expect(described.cause).toBeUndefined();
  });

  it('waitTimeScale also scales SecondsPath waits, which still pass their input through and stop on StopExecution', async () => {
    let afterCalls = 0;
    const { facade, client, describeUntilDone } = await start({
      waitTimeScale: 0.01,
      stateMachines: [
        {
          name: 'pathwait',
          workflowType: 'STANDARD',
          definitionText: definition({
            Delay: { Type: 'Wait', SecondsPath: '$.delaySeconds', InputPath: '$.args', OutputPath: '$.keep', Next: 'After' },
            After: { Type: 'Task', Resource: '${Worker_after}', End: true },
          }),
        },
      ],
      resolveWorker: () => async (event) => {
        afterCalls++;
        return { after: event };
      },
    });
    const arn = facade.stateMachineArn('pathwait');
    const waited = Date.now();
    const quick = await client.send(
      new StartExecutionCommand({ stateMachineArn: arn, input: input({ args: { delaySeconds: 30, keep: { k: 1 } }, dropped: true }) }),
    );
    const described = await describeUntilDone(quick.executionArn!);
    // 30 s scaled by 0.01: well under the 30 s it would take unscaled.
    expect(Date.now() - waited).toBeLessThan(10_000);
    expect(JSON.parse(described.output!)).toEqual({ after: { k: 1 } });
    const { events } = await client.send(new GetExecutionHistoryCommand({ executionArn: quick.executionArn }));
    expect(events!.map((e) => e.type)).toContain('WaitStateEntered');

    const stopped = await client.send(new StartExecutionCommand({ stateMachineArn: arn, input: input({ args: { delaySeconds: 30, keep: {} } }) }));
    await client.send(new StopExecutionCommand({ executionArn: stopped.executionArn }));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(afterCalls).toBe(1);
    expect((await client.send(new DescribeExecutionCommand({ executionArn: stopped.executionArn }))).status).toBe('ABORTED');
  });

  it('StartSyncExecution runs an EXPRESS machine to its end and reports status, output, error and cause', async () => {
    const { facade, client } = await start({
      stateMachines: [
        {
          name: 'quick',
          workflowType: 'EXPRESS',
          definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_quick}', End: true } }),
        },
      ],
      resolveWorker: () => async (event) => {
        const { n } = event as { n: number };
        if (n < 0) throw new RangeError('n must not be negative');
        return { doubled: n * 2 };
      },
    });
    const ok = await client.send(new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('quick'), name: 'sync-1', input: input({ n: 21 }) }));
    expect(ok.status).toBe('SUCCEEDED');
    expect(JSON.parse(ok.output!)).toEqual({ doubled: 42 });
    expect(ok.executionArn).toMatch(/^arn:aws:states:us-east-1:000000000000:express:quick:sync-1:[0-9a-f-]{36}$/);
    expect(ok.stopDate).toBeInstanceOf(Date);

    const failed = await client.send(new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('quick'), input: input({ n: -1 }) }));
    expect(failed).toMatchObject({ status: 'FAILED', error: 'RangeError' });
    expect(JSON.parse(failed.cause!)).toEqual({ errorType: 'RangeError', errorMessage: 'n must not be negative' });
    expect(failed.output).toBeUndefined();

    // Express executions are not idempotent and not describable.
    const again = await client.send(new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('quick'), name: 'sync-1', input: input({ n: 1 }) }));
    expect(again.executionArn).not.toBe(ok.executionArn);
    await expect(client.send(new DescribeExecutionCommand({ executionArn: ok.executionArn }))).rejects.toBeInstanceOf(InvalidArn);
    await expect(client.send(new ListExecutionsCommand({ stateMachineArn: facade.stateMachineArn('quick') }))).rejects.toBeInstanceOf(
      StateMachineTypeNotSupported,
    );
  });

  it('StartSyncExecution needs disableHostPrefix: the SDK otherwise sends it to a sync- host', async () => {
    const { facade } = await start({ stateMachines: [{ name: 'quick', workflowType: 'EXPRESS', definitionText: definition({ Done: { Type: 'Succeed' } }) }] });
    const prefixed = new SFNClient({ region: 'us-east-1', endpoint: facade.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const hosts: string[] = [];
    prefixed.middlewareStack.add(
      () => async (args) => {
        hosts.push((args.request as { hostname: string }).hostname);
        throw new Error('stop before sending');
      },
      { step: 'finalizeRequest' },
    );
    await expect(prefixed.send(new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('quick') }))).rejects.toThrow('stop before sending');
    expect(hosts).toEqual(['sync-127.0.0.1']);
  });

  it('an execution past its TimeoutSeconds is TIMED_OUT, without error or cause, and announced', async () => {
    const events: ExecutionStatusChangeEvent[] = [];
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        { name: 'late', workflowType: 'STANDARD', definitionText: JSON.stringify({ StartAt: 'Sleep', TimeoutSeconds: 1, States: { Sleep: { Type: 'Wait', Seconds: 30, End: true } } }) },
      ],
      onStatusChange: (event) => events.push(event),
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('late') }));
    const described = await describeUntilDone(executionArn!);
    expect(described.status).toBe('TIMED_OUT');
    expect(described.error).toBeUndefined();
    expect(events.map((e) => e.detail.status)).toEqual(['RUNNING', 'TIMED_OUT']);
  });

  it('emits RUNNING then the terminal status change through the event bus, retrying a throwing handler', async () => {
    const delivered: ExecutionStatusChangeEvent[] = [];
    let failures = 0;
    const bus = createLocalEventBus(
      async (event) => {
        // The first delivery of the terminal event fails, as a cold status-sync Lambda might.
        if (event.detail.status !== 'RUNNING' && failures === 0) {
          failures++;
          throw new Error('status-sync not ready');
        }
        delivered.push(event);
      },
      { baseDelayMs: 10, logger },
    );
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        { name: 'evented', workflowType: 'STANDARD', definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_w}', End: true } }) },
        { name: 'express', workflowType: 'EXPRESS', definitionText: definition({ Done: { Type: 'Succeed' } }) },
      ],
      resolveWorker: () => async () => ({ answer: 42 }),
      onStatusChange: (event) => bus.publish(event),
    });
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('evented'), name: 'evt', input: input({ q: SECRET }) }),
    );
    await describeUntilDone(executionArn!);
    await client.send(new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('express') }));
    await bus.drain();

    expect(failures).toBe(1);
    expect(delivered.map((e) => e.detail.status)).toEqual(['RUNNING', 'SUCCEEDED']);
    const [running, succeeded] = delivered as [ExecutionStatusChangeEvent, ExecutionStatusChangeEvent];
    expect(running).toMatchObject({
      version: '0',
      'detail-type': 'Step Functions Execution Status Change',
      source: 'aws.states',
      account: '000000000000',
      region: 'us-east-1',
      resources: [executionArn],
      detail: {
        executionArn,
        stateMachineArn: facade.stateMachineArn('evented'),
        name: 'evt',
        status: 'RUNNING',
        stopDate: null,
        input: input({ q: SECRET }),
        inputDetails: { included: true },
        output: null,
        outputDetails: null,
        error: null,
        cause: null,
      },
    });
    expect(running.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(typeof running.detail.startDate).toBe('number');
    expect(succeeded.id).not.toBe(running.id);
    expect(succeeded.detail).toMatchObject({ status: 'SUCCEEDED', output: '{"answer":42}', outputDetails: { included: true }, startDate: running.detail.startDate });
    expect(succeeded.detail.stopDate).toBeGreaterThanOrEqual(succeeded.detail.startDate);
    await bus.close();
  });

  it('a status listener that throws is logged and never fails the API call or the execution', async () => {
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [{ name: 'm', workflowType: 'STANDARD', definitionText: definition({ Done: { Type: 'Succeed' } }) }],
      onStatusChange: () => {
        throw new Error('listener exploded');
      },
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('m'), input: input({ q: SECRET }) }));
    expect((await describeUntilDone(executionArn!)).status).toBe('SUCCEEDED');
    expect(logLines.some((line) => line.includes('listener exploded') && line.includes(executionArn!))).toBe(true);
  });

  it('persists executions in dataDir: a second facade describes them, and a run cut off by the restart becomes FAILED Local.RuntimeRestarted', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sfn-facade-'));
    try {
      const machines: SfnFacadeOptions['stateMachines'] = [
        {
          name: 'persisted',
          workflowType: 'STANDARD',
          definitionText: definition({
            Choose: { Type: 'Choice', Choices: [{ Variable: '$.wait', BooleanEquals: true, Next: 'Sleep' }], Default: 'Work' },
            Sleep: { Type: 'Wait', Seconds: 30, Next: 'Work' },
            Work: { Type: 'Task', Resource: '${Worker_w}', End: true },
          }),
        },
      ];
      const worker: WorkerHandler = async () => ({ saved: true });
      const first = await start({ stateMachines: machines, resolveWorker: () => worker, dataDir });
      const arn = first.facade.stateMachineArn('persisted');
      const done = await first.client.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'finished', input: input({ wait: false }) }));
      await first.describeUntilDone(done.executionArn!);
      const cut = await first.client.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'cut-off', input: input({ wait: true }) }));
      await first.facade.close();

      const file = JSON.parse(await readFile(join(dataDir, 'sfn-executions.json'), 'utf8')) as { executions: Array<{ name: string; status: string }> };
      expect(file.executions.map((e) => [e.name, e.status])).toEqual([
        ['finished', 'SUCCEEDED'],
        ['cut-off', 'RUNNING'],
      ]);

      const events: ExecutionStatusChangeEvent[] = [];
      const second = await start({ stateMachines: machines, resolveWorker: () => worker, dataDir, onStatusChange: (e) => events.push(e) });
      const finished = await second.client.send(new DescribeExecutionCommand({ executionArn: done.executionArn }));
      expect(finished).toMatchObject({ status: 'SUCCEEDED', output: '{"saved":true}', input: input({ wait: false }) });
      const restarted = await second.client.send(new DescribeExecutionCommand({ executionArn: cut.executionArn }));
      expect(restarted).toMatchObject({ status: 'FAILED', error: 'Local.RuntimeRestarted' });
      expect(restarted.stopDate).toBeInstanceOf(Date);
      expect(events.map((e) => [e.detail.executionArn, e.detail.status, e.detail.error])).toEqual([
        [cut.executionArn, 'FAILED', 'Local.RuntimeRestarted'],
      ]);
      await expect(
        second.client.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'finished', input: input({ wait: false }) })),
      ).rejects.toBeInstanceOf(ExecutionAlreadyExists);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('waitForTaskToken: the worker gets $$.Task.Token, and SendTaskSuccess / SendTaskFailure resume the execution', async () => {
    const tokens: string[] = [];
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'ask',
          workflowType: 'STANDARD',
          definitionText: definition({
            Ask: {
              Type: 'Task',
              Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
              Parameters: { FunctionName: '${Worker_request_input}', Payload: { 'taskToken.$': '$$.Task.Token', 'question.$': '$.question' } },
              ResultPath: '$.answer',
              End: true,
            },
          }),
        },
      ],
      resolveWorker: () => async (event) => {
        tokens.push((event as { taskToken: string }).taskToken);
        return null;
      },
    });
    const waitForToken = async (count: number) => {
      while (tokens.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
      return tokens[count - 1]!;
    };

    const yes = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('ask'), input: input({ question: 'ok?' }) }));
    const token = await waitForToken(1);
    await client.send(new SendTaskHeartbeatCommand({ taskToken: token }));
    expect((await client.send(new DescribeExecutionCommand({ executionArn: yes.executionArn }))).status).toBe('RUNNING');
    await client.send(new SendTaskSuccessCommand({ taskToken: token, output: input({ confirmed: true }) }));
    const succeeded = await describeUntilDone(yes.executionArn!);
    expect(JSON.parse(succeeded.output!)).toEqual({ question: 'ok?', answer: { confirmed: true } });
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }))).rejects.toBeInstanceOf(TaskTimedOut);

    const no = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('ask'), input: input({ question: 'sure?' }) }));
    const second = await waitForToken(2);
    expect(second).not.toBe(token);
    await client.send(new SendTaskFailureCommand({ taskToken: second, error: 'Mcp.Declined', cause: 'user declined' }));
    expect(await describeUntilDone(no.executionArn!)).toMatchObject({ status: 'FAILED', error: 'Mcp.Declined', cause: 'user declined' });

    await expect(client.send(new SendTaskSuccessCommand({ taskToken: 'garbage', output: '{}' }))).rejects.toBeInstanceOf(InvalidToken);
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: 'A'.repeat(64), output: '{}' }))).rejects.toBeInstanceOf(TaskDoesNotExist);
  });

  it('maps workers inside Map iterations and serves history, listings and the state machine description', async () => {
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'fanout',
          workflowType: 'STANDARD',
          definitionText: definition({
            Each: {
              Type: 'Map',
              ItemsPath: '$.items',
              ItemProcessor: { StartAt: 'Square', States: { Square: { Type: 'Task', Resource: '${Worker_square}', End: true } } },
              End: true,
            },
          }),
        },
      ],
      resolveWorker: () => async (n) => (n as number) ** 2,
    });
    const arn = facade.stateMachineArn('fanout');
    const first = await client.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'first', input: input({ items: [1, 2, 3] }) }));
    expect(JSON.parse((await describeUntilDone(first.executionArn!)).output!)).toEqual([1, 4, 9]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await client.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'second', input: input({ items: [] }) }));
    await describeUntilDone(second.executionArn!);

    const listed = await client.send(new ListExecutionsCommand({ stateMachineArn: arn }));
    expect(listed.executions!.map((e) => [e.name, e.status])).toEqual([
      ['second', 'SUCCEEDED'],
      ['first', 'SUCCEEDED'],
    ]);
    const page = await client.send(new ListExecutionsCommand({ stateMachineArn: arn, maxResults: 1 }));
    expect(page.executions).toHaveLength(1);
    const next = await client.send(new ListExecutionsCommand({ stateMachineArn: arn, maxResults: 1, nextToken: page.nextToken }));
    expect(next.executions![0]!.name).toBe('first');
    expect(next.nextToken).toBeUndefined();
    expect((await client.send(new ListExecutionsCommand({ stateMachineArn: arn, statusFilter: 'FAILED' }))).executions).toEqual([]);

    const history = await client.send(new GetExecutionHistoryCommand({ executionArn: first.executionArn }));
    const types = history.events!.map((e) => e.type);
    expect(types[0]).toBe('ExecutionStarted');
    expect(types.at(-1)).toBe('ExecutionSucceeded');
    expect(types).toContain('MapStateEntered');
    expect(types.filter((t) => t === 'TaskStateEntered')).toHaveLength(3);
    expect(history.events!.map((e) => e.id)).toEqual(history.events!.map((_, i) => i + 1));
    const lean = await client.send(new GetExecutionHistoryCommand({ executionArn: first.executionArn, includeExecutionData: false }));
    expect(lean.events![0]!.executionStartedEventDetails?.input).toBeUndefined();

    const machines = await client.send(new ListStateMachinesCommand({}));
    expect(machines.stateMachines!.map((m) => [m.name, m.type, m.stateMachineArn])).toEqual([['fanout', 'STANDARD', arn]]);
    const described = await client.send(new DescribeStateMachineCommand({ stateMachineArn: arn }));
    expect(described).toMatchObject({ name: 'fanout', status: 'ACTIVE', type: 'STANDARD' });
    expect(JSON.parse(described.definition!).States.Each.Type).toBe('Map');
  });

  it('refuses definitions the local runtime would run differently, naming the state', async () => {
    await expect(
      startSfnFacade({
        stateMachines: [
          {
            name: 'remote',
            workflowType: 'STANDARD',
            definitionText: definition({ Put: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', End: true } }),
          },
        ],
        resolveWorker: () => async () => null,
        logger,
      }),
    ).rejects.toThrow(/state "Put" uses Resource "arn:aws:states:::dynamodb:putItem"/);
    await expect(
      startSfnFacade({ stateMachines: [], resolveWorker: () => async () => null, host: '0.0.0.0', logger }),
    ).rejects.toThrow(/loopback/);
  });
});
