/**
 * Tasks answered by `mocks.json` (issue 11): AWS service integrations run locally from the
 * Step Functions Local mock format, through the facade and the real SFNClient.
 */
import { StartExecutionCommand, StartSyncExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { parseToolMocks } from '../../lambdas/tools/tool-mocks.ts';
import { createTaskMocks } from '../../local/stepfunctions/sfn-facade-mocks.ts';
import { definition, input, useFacadeHarness } from './sfn-facade-harness.ts';

const { start } = useFacadeHarness();

function mocksOf(testCase: Record<string, string>, responses: Record<string, unknown>) {
  const { mocks, problems } = parseToolMocks({ StateMachines: { tool: { TestCases: { Default: testCase } } }, MockedResponses: responses }, ['tool']);
  expect(problems).toEqual([]);
  return createTaskMocks(mocks!);
}

const getItem = {
  Type: 'Task',
  Resource: 'arn:aws:states:::dynamodb:getItem',
  Parameters: { TableName: 'items', Key: { pk: { 'S.$': '$.arguments.id' } } },
  ResultSelector: { 'name.$': '$.Item.name.S' },
  End: true,
};

describe('mocked Tasks', () => {
  it('answer a DynamoDB getItem from its Return, shaped as the service returns it', async () => {
    const taskMocks = mocksOf({ GetItem: 'Found' }, { Found: { 0: { Return: { Item: { pk: { S: 'a' }, name: { S: 'Ada' } } } } } });
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [{ name: 'tool', definitionText: definition({ GetItem: getItem }), workflowType: 'STANDARD', taskMocks }],
    });
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('tool'), input: input({ arguments: { id: 'a' } }) }),
    );
    const done = await describeUntilDone(executionArn!);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output!)).toEqual({ name: 'Ada' });
  });

  it('fail with a Throw mock as Error and Cause, which a Catch catches', async () => {
    const taskMocks = mocksOf({ Send: 'Refused' }, { Refused: { 0: { Throw: { Error: 'SQS.QueueDoesNotExistException', Cause: 'no such queue' } } } });
    const states = {
      Send: {
        Type: 'Task',
        Resource: 'arn:aws:states:::sqs:sendMessage',
        Parameters: { QueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/q', 'MessageBody.$': '$' },
        Catch: [{ ErrorEquals: ['SQS.QueueDoesNotExistException'], ResultPath: '$.error', Next: 'Caught' }],
        End: true,
      },
      Caught: { Type: 'Pass', OutputPath: '$.error', End: true },
    };
    const { facade, client } = await start({ stateMachines: [{ name: 'tool', definitionText: definition(states), workflowType: 'EXPRESS', taskMocks }] });
    const done = await client.send(new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('tool'), input: input({}) }));
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output!)).toEqual({ Error: 'SQS.QueueDoesNotExistException', Cause: 'no such queue' });
  });

  it('count each state\'s invocations per execution: "0", then "1-2" for the next two calls, then "3"', async () => {
    const taskMocks = mocksOf(
      { GetItem: 'Flaky' },
      {
        Flaky: {
          0: { Throw: { Error: 'DynamoDB.ProvisionedThroughputExceededException', Cause: 'slow down' } },
          '1-2': { Throw: { Error: 'DynamoDB.InternalServerErrorException', Cause: 'try again' } },
          3: { Return: { Item: { name: { S: 'Ada' } } } },
        },
      },
    );
    // Calling again from a Catch counts like a retry, without Retry's one-second intervals.
    const flaky = { ...getItem, Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.lastError', Next: 'GetItem' }] };
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [{ name: 'tool', definitionText: definition({ GetItem: flaky }), workflowType: 'STANDARD', taskMocks }],
    });
    const stateMachineArn = facade.stateMachineArn('tool');
    // Two executions: each starts again at invocation 0.
    for (const name of ['first', 'second']) {
      const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn, name, input: input({ arguments: { id: 'a' } }) }));
      const done = await describeUntilDone(executionArn!);
      expect(done.status, name).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!)).toEqual({ name: 'Ada' });
    }
  });

  it('fail the Task once the mocked invocations run out, naming the response and the call', async () => {
    const taskMocks = mocksOf({ GetItem: 'Once' }, { Once: { 0: { Throw: { Error: 'Boom', Cause: 'first' } } } });
    const flaky = { ...getItem, Catch: [{ ErrorEquals: ['Boom'], ResultPath: '$.lastError', Next: 'GetItem' }] };
    const { facade, client } = await start({
      stateMachines: [{ name: 'tool', definitionText: definition({ GetItem: flaky }), workflowType: 'EXPRESS', taskMocks }],
    });
    const done = await client.send(
      new StartSyncExecutionCommand({ stateMachineArn: facade.stateMachineArn('tool'), input: input({ arguments: { id: 'a' } }) }),
    );
    expect(done.status).toBe('FAILED');
    expect(done.error).toBe('States.Runtime');
    expect(done.cause).toBe('mocks.json: MockedResponses.Once answers invocations 0-0 of state "GetItem"; this execution called it a 2nd time');
  });
});
