/** The execution lifecycle on the local Step Functions facade: start, run, succeed, fail, time out, EXPRESS runs. */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  InvalidArn,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StartSyncExecutionCommand,
  StateMachineTypeNotSupported,
} from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import type { ExecutionStatusChangeEvent } from '../../local/stepfunctions/sfn-facade.ts';
import { definition, deferred, input, SECRET, useFacadeHarness } from './sfn-facade-harness.ts';

const { start } = useFacadeHarness();

describe('local Step Functions facade: execution lifecycle, driven by the real SFNClient', () => {
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
      stateMachines: [
        { name: 'slow', workflowType: 'STANDARD', definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_slow}', End: true } }) },
      ],
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

  it('an execution past its TimeoutSeconds is TIMED_OUT, without error or cause, and announced', async () => {
    const events: ExecutionStatusChangeEvent[] = [];
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'late',
          workflowType: 'STANDARD',
          definitionText: JSON.stringify({ StartAt: 'Sleep', TimeoutSeconds: 1, States: { Sleep: { Type: 'Wait', Seconds: 30, End: true } } }),
        },
      ],
      onStatusChange: (event) => events.push(event),
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('late') }));
    const described = await describeUntilDone(executionArn!);
    expect(described.status).toBe('TIMED_OUT');
    expect(described.error).toBeUndefined();
    expect(events.map((e) => e.detail.status)).toEqual(['RUNNING', 'TIMED_OUT']);
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
    expect(JSON.parse(failed.cause!)).toMatchObject({ errorType: 'RangeError', errorMessage: 'n must not be negative', trace: expect.any(Array) });
    expect(failed.output).toBeUndefined();

    // Express executions are not idempotent and not describable.
    const again = await client.send(
      new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('quick'), name: 'sync-1', input: input({ n: 1 }) }),
    );
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
});
