/** StopExecution on the local Step Functions facade, and the Wait states it cuts short. */
import { DescribeExecutionCommand, GetExecutionHistoryCommand, StartExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import type { ExecutionStatusChangeEvent } from '../../local/stepfunctions/sfn-facade.ts';
import { definition, deferred, input, useFacadeHarness } from './sfn-facade-harness.ts';

const { start } = useFacadeHarness();

describe('local Step Functions facade: StopExecution and Wait states', () => {
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

  it('StopExecution during a running Task aborts the execution with the given error and cause, announced once; the late worker result changes nothing', async () => {
    const events: ExecutionStatusChangeEvent[] = [];
    const working = deferred();
    const release = deferred();
    const { facade, client } = await start({
      stateMachines: [
        { name: 'busy', workflowType: 'STANDARD', definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_busy}', End: true } }) },
      ],
      resolveWorker: () => async () => {
        working.resolve();
        await release.promise;
        return { late: true };
      },
      onStatusChange: (event) => events.push(event),
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('busy'), name: 'busy-1' }));
    await working.promise;
    await client.send(new StopExecutionCommand({ executionArn, error: 'Mcp.Cancelled', cause: 'client cancelled' }));
    release.resolve();
    await new Promise((resolve) => setTimeout(resolve, 200));

    const described = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(described).toMatchObject({ status: 'ABORTED', error: 'Mcp.Cancelled', cause: 'client cancelled' });
    expect(described.output).toBeUndefined();
    expect(events.map((event) => [event.detail.status, event.detail.error, event.detail.cause])).toEqual([
      ['RUNNING', null, null],
      ['ABORTED', 'Mcp.Cancelled', 'client cancelled'],
    ]);
  });

  it('StopExecution of an execution that has already ended succeeds and changes nothing: status, output, stopDate, events', async () => {
    const events: ExecutionStatusChangeEvent[] = [];
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        { name: 'quick', workflowType: 'STANDARD', definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_quick}', End: true } }) },
      ],
      resolveWorker: () => async () => ({ answer: 42 }),
      onStatusChange: (event) => events.push(event),
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('quick') }));
    const finished = await describeUntilDone(executionArn!);
    expect(finished.status).toBe('SUCCEEDED');

    const stopped = await client.send(new StopExecutionCommand({ executionArn, error: 'Mcp.Cancelled', cause: 'too late' }));
    expect(stopped.stopDate!.getTime()).toBe(finished.stopDate!.getTime());
    const after = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(after).toMatchObject({ status: 'SUCCEEDED', output: '{"answer":42}' });
    expect(after.error).toBeUndefined();
    expect(after.cause).toBeUndefined();
    expect(events.map((event) => event.detail.status)).toEqual(['RUNNING', 'SUCCEEDED']);
  });
});
