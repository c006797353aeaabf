/** What the local Step Functions facade remembers: history, listings, the machine description, and executions kept in a data directory. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  ExecutionAlreadyExists,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import type { ExecutionStatusChangeEvent, SfnFacadeOptions, WorkerHandler } from '../../local/stepfunctions/sfn-facade.ts';
import { definition, input, useFacadeHarness } from './sfn-facade-harness.ts';

const { start } = useFacadeHarness();

describe('local Step Functions facade: history, listings and persistence', () => {
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
      expect(events.map((e) => [e.detail.executionArn, e.detail.status, e.detail.error])).toEqual([[cut.executionArn, 'FAILED', 'Local.RuntimeRestarted']]);
      await expect(
        second.client.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'finished', input: input({ wait: false }) })),
      ).rejects.toBeInstanceOf(ExecutionAlreadyExists);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
