/**
 * Swapping a state machine on the running facade (`npm start -- --watch`), as a deploy does:
 * new executions run the new definition and workers, running ones keep what they started with,
 * a machine that cannot run changes nothing, and a removed machine's running executions end.
 */
import { DescribeStateMachineCommand, StartExecutionCommand, StartSyncExecutionCommand, StateMachineDoesNotExist } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import type { WorkerHandler } from '../../local/stepfunctions/sfn-facade.ts';
import { deferred, definition, input, useFacadeHarness } from './sfn-facade-harness.ts';

const { start } = useFacadeHarness();

const GREET = definition({ Greet: { Type: 'Task', Resource: '${Worker_greeter}', End: true } });

/** A facade whose `greeter` worker is whatever `workers.greeter` is when a machine is bound. */
async function startWithWorkers(workflowType: 'STANDARD' | 'EXPRESS') {
  const workers = new Map<string, WorkerHandler>([['greeter', async () => ({ greeting: 'hello' })]]);
  const started = await start({
    stateMachines: [{ name: 'greet', workflowType, definitionText: GREET }],
    resolveWorker: (name) => workers.get(name) as WorkerHandler,
  });
  return { ...started, workers };
}

describe('local Step Functions facade: a machine swapped while it serves', () => {
  it('runs the next execution with the new workers, and the one already running with the old', async () => {
    const { facade, client, describeUntilDone, workers } = await startWithWorkers('STANDARD');
    const release = deferred();
    workers.set('greeter', async () => {
      await release.promise;
      return { greeting: 'old' };
    });
    facade.setStateMachine({ name: 'greet', workflowType: 'STANDARD', definitionText: GREET });
    const arn = facade.stateMachineArn('greet');
    const running = await client.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'before', input: input({}) }));

    workers.set('greeter', async () => ({ greeting: 'new' }));
    facade.setStateMachine({ name: 'greet', workflowType: 'STANDARD', definitionText: GREET });
    const after = await client.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'after', input: input({}) }));
    expect(JSON.parse((await describeUntilDone(after.executionArn!)).output!)).toEqual({ greeting: 'new' });

    release.resolve();
    expect(JSON.parse((await describeUntilDone(running.executionArn!)).output!)).toEqual({ greeting: 'old' });
  });

  it('serves a changed definition and workflow type from the next call', async () => {
    const { facade, client } = await startWithWorkers('STANDARD');
    facade.setStateMachine({
      name: 'greet',
      workflowType: 'EXPRESS',
      definitionText: definition({ Answer: { Type: 'Pass', Result: { greeting: 'passed' }, End: true } }),
    });
    const arn = facade.stateMachineArn('greet');
    expect((await client.send(new DescribeStateMachineCommand({ stateMachineArn: arn }))).type).toBe('EXPRESS');
    const { output } = await client.send(new StartSyncExecutionCommand({ stateMachineArn: arn, input: input({}) }));
    expect(JSON.parse(output!)).toEqual({ greeting: 'passed' });
  });

  it('refuses a definition it cannot run, naming the machine, and keeps serving the old one', async () => {
    const { facade, client } = await startWithWorkers('EXPRESS');
    expect(() => facade.setStateMachine({ name: 'greet', workflowType: 'EXPRESS', definitionText: '{ "StartAt": ' })).toThrow(
      /state machine greet: the definition is not valid JSON/,
    );
    const { output } = await client.send(new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('greet'), input: input({}) }));
    expect(JSON.parse(output!)).toEqual({ greeting: 'hello' });
  });

  it('adds a machine, and a removed one takes no new execution while its running one ends', async () => {
    const { facade, client, describeUntilDone, workers } = await startWithWorkers('STANDARD');
    facade.setStateMachine({ name: 'added', workflowType: 'STANDARD', definitionText: GREET });
    const release = deferred();
    workers.set('greeter', async () => {
      await release.promise;
      return { greeting: 'last' };
    });
    facade.setStateMachine({ name: 'greet', workflowType: 'STANDARD', definitionText: GREET });
    const arn = facade.stateMachineArn('greet');
    const running = await client.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'running', input: input({}) }));

    facade.removeStateMachine('greet');
    expect(() => facade.stateMachineArn('greet')).toThrow(/no local state machine named "greet"/);
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: arn, input: input({}) }))).rejects.toBeInstanceOf(StateMachineDoesNotExist);
    release.resolve();
    expect((await describeUntilDone(running.executionArn!)).status).toBe('SUCCEEDED');
    expect(facade.stateMachineArn('added')).toBe('arn:aws:states:us-east-1:000000000000:stateMachine:added');
  });
});
