/** The EventBridge status-change events of the local Step Functions facade, delivered by the local event bus. */
import { StartExecutionCommand, StartSyncExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { statusChangePattern } from '../../lambdas/aws/status-events.ts';
import { createLocalEventBus, type LocalEventBus } from '../../local/events/event-bus.ts';
import type { ExecutionStatusChangeEvent } from '../../local/stepfunctions/sfn-facade.ts';
import { definition, input, SECRET, useFacadeHarness } from './sfn-facade-harness.ts';

const { start, logger, logLines } = useFacadeHarness();

describe('local Step Functions facade: status-change events', () => {
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
    expect(succeeded.detail).toMatchObject({
      status: 'SUCCEEDED',
      output: '{"answer":42}',
      outputDetails: { included: true },
      startDate: running.detail.startDate,
    });
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

  it("the event detail has exactly the fields of AWS's Step Functions Execution Status Change", async () => {
    const events: ExecutionStatusChangeEvent[] = [];
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [{ name: 'm', workflowType: 'STANDARD', definitionText: definition({ Done: { Type: 'Succeed' } }) }],
      onStatusChange: (event) => events.push(event),
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('m') }));
    await describeUntilDone(executionArn!);
    const fields = [
      'executionArn',
      'stateMachineArn',
      'name',
      'status',
      'startDate',
      'stopDate',
      'input',
      'inputDetails',
      'output',
      'outputDetails',
      'error',
      'cause',
    ];
    expect(events.map((event) => event.detail.status)).toEqual(['RUNNING', 'SUCCEEDED']);
    for (const event of events) {
      expect(Object.keys(event).sort()).toEqual(['account', 'detail', 'detail-type', 'id', 'region', 'resources', 'source', 'time', 'version']);
      expect(Object.keys(event.detail).sort()).toEqual([...fields].sort());
    }
  });

  it("with the AWS rule's pattern, the bus forwards RUNNING and terminal events of the listed STANDARD machines only", async () => {
    const delivered: ExecutionStatusChangeEvent[] = [];
    let bus!: LocalEventBus<ExecutionStatusChangeEvent>;
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        { name: 'listed', workflowType: 'STANDARD', definitionText: definition({ Sleep: { Type: 'Wait', Seconds: 30, End: true } }) },
        { name: 'unlisted', workflowType: 'STANDARD', definitionText: definition({ Done: { Type: 'Succeed' } }) },
        { name: 'express', workflowType: 'EXPRESS', definitionText: definition({ Done: { Type: 'Succeed' } }) },
      ],
      onStatusChange: (event) => bus.publish(event),
    });
    // The pattern the CDK rule is built from: the STANDARD machines it watches.
    bus = createLocalEventBus(async (event) => void delivered.push(event), { pattern: statusChangePattern([facade.stateMachineArn('listed')]), logger });

    const listed = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('listed') }));
    await client.send(new StopExecutionCommand({ executionArn: listed.executionArn, error: 'Mcp.Cancelled' }));
    const unlisted = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('unlisted') }));
    await describeUntilDone(unlisted.executionArn!);
    // EXPRESS executions emit no status-change events in AWS, so none reach the bus.
    expect((await client.send(new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('express') }))).status).toBe('SUCCEEDED');
    await bus.close();

    expect(delivered.map((event) => [event.detail.executionArn, event.detail.status, event.detail.error])).toEqual([
      [listed.executionArn, 'RUNNING', null],
      [listed.executionArn, 'ABORTED', 'Mcp.Cancelled'],
    ]);
  });
});
