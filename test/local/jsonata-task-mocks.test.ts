/**
 * The interpreter's `taskMocks` option: a Task whose resource is neither a worker nor a
 * Lambda invoke is answered by its mock, in JSONPath and JSONata states alike; a mock's
 * failure is a task failure that Retry and Catch see; a Task with no mock refuses to load.
 */
import { describe, expect, it } from 'vitest';
import type { TaskMocks } from '../../local/stepfunctions/asl-tasks.ts';
import { TaskError } from '../../local/stepfunctions/sfn-facade-errors.ts';
import { interpreterFor, jsonataMachine, runDefinition } from './jsonata-harness.ts';

const GET_ITEM = 'arn:aws:states:::dynamodb:getItem';

/** Mocks answering each state from a list, one entry per call of one execution. */
function scriptedMocks(script: Record<string, Array<{ Return: unknown } | { Throw: { Error: string; Cause: string } }>>) {
  const calls: Array<{ state: string; input: unknown }> = [];
  const mocks: TaskMocks = {
    handlerFor(state) {
      const answers = script[state];
      if (!answers) return undefined;
      let call = 0;
      return async (input) => {
        calls.push({ state, input });
        const answer = answers[call++]!;
        if ('Throw' in answer) throw new TaskError(answer.Throw.Error, answer.Throw.Cause);
        return answer.Return;
      };
    },
  };
  return { mocks, calls };
}

const item = { Item: { id: { S: '42' }, name: { S: 'Ada' } } };

describe('mocked Task states', () => {
  it('a JSONPath DynamoDB getItem is answered by its mock, which receives the effective Parameters', async () => {
    const { mocks, calls } = scriptedMocks({ Get: [{ Return: item }] });
    const { outcome } = await runDefinition(
      {
        StartAt: 'Get',
        States: {
          Get: {
            Type: 'Task',
            Resource: GET_ITEM,
            Parameters: { TableName: 'people', Key: { id: { 'S.$': '$.id' } } },
            ResultSelector: { 'name.$': '$.Item.name.S' },
            ResultPath: '$.person',
            End: true,
          },
        },
      },
      { id: '42' },
      { taskMocks: mocks },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { id: '42', person: { name: 'Ada' } } });
    expect(calls).toEqual([{ state: 'Get', input: { TableName: 'people', Key: { id: { S: '42' } } } }]);
  });

  it('a JSONata Task passes its Arguments to the mock and reads the answer as $states.result', async () => {
    const { mocks, calls } = scriptedMocks({ Get: [{ Return: item }] });
    const { outcome } = await runDefinition(
      jsonataMachine({
        Get: {
          Type: 'Task',
          Resource: GET_ITEM,
          Arguments: { TableName: 'people', Key: { id: { S: '{% $states.input.id %}' } } },
          Output: { name: '{% $states.result.Item.name.S %}' },
          End: true,
        },
      }),
      { id: '42' },
      { taskMocks: mocks },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { name: 'Ada' } });
    expect(calls).toEqual([{ state: 'Get', input: { TableName: 'people', Key: { id: { S: '42' } } } }]);
  });

  it('a mock that throws is a task failure: Retry calls it again, then Catch sees its Error and Cause (both query languages)', async () => {
    const failing = () =>
      scriptedMocks({
        Get: [
          { Throw: { Error: 'DynamoDB.ProvisionedThroughputExceededException', Cause: 'slow down' } },
          { Throw: { Error: 'DynamoDB.ResourceNotFoundException', Cause: 'no table' } },
        ],
      });
    const retry = [
      { ErrorEquals: ['DynamoDB.ProvisionedThroughputExceededException'], IntervalSeconds: 1, MaxAttempts: 1, JitterStrategy: 'FULL', MaxDelaySeconds: 1 },
    ];
    const jsonPath = {
      StartAt: 'Get',
      States: {
        Get: {
          Type: 'Task',
          Resource: GET_ITEM,
          Parameters: { TableName: 't' },
          Retry: retry,
          Catch: [{ ErrorEquals: ['States.TaskFailed'], ResultPath: '$.error', Next: 'Handled' }],
          End: true,
        },
        Handled: { Type: 'Pass', End: true },
      },
    };
    const jsonata = jsonataMachine({
      Get: {
        Type: 'Task',
        Resource: GET_ITEM,
        Arguments: { TableName: 't' },
        Retry: retry,
        Catch: [{ ErrorEquals: ['States.TaskFailed'], Output: { error: '{% $states.errorOutput %}' }, Next: 'Handled' }],
        End: true,
      },
      Handled: { Type: 'Pass', End: true },
    });
    for (const definition of [jsonPath, jsonata]) {
      const { mocks, calls } = failing();
      const { outcome } = await runDefinition(definition, {}, { taskMocks: mocks });
      expect(outcome).toEqual({ status: 'SUCCEEDED', output: { error: { Error: 'DynamoDB.ResourceNotFoundException', Cause: 'no table' } } });
      expect(calls).toHaveLength(2);
    }
  });

  it('each execution gets its own handlers, so call counts start again', async () => {
    const { mocks } = scriptedMocks({ Get: [{ Return: { first: true } }] });
    const definition = jsonataMachine({ Get: { Type: 'Task', Resource: GET_ITEM, Arguments: {}, End: true } });
    for (let run = 0; run < 2; run++) {
      expect((await runDefinition(definition, {}, { taskMocks: mocks })).outcome).toEqual({ status: 'SUCCEEDED', output: { first: true } });
    }
  });

  it('a Task that is neither a worker, a Lambda invoke nor mocked refuses to load, naming the state and mocks.json', () => {
    const definition = jsonataMachine({ Put: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage', Arguments: {}, End: true } });
    expect(() => interpreterFor(definition)).toThrow(
      /state machine m: state "Put" uses Resource "arn:aws:states:::sqs:sendMessage".*add an entry for "Put" to the tool's mocks\.json/,
    );
    expect(() => interpreterFor({ StartAt: 'Put', States: { Put: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage', End: true } } })).toThrow(
      /state "Put" .*mocks\.json/,
    );
    const { mocks } = scriptedMocks({ Other: [{ Return: {} }] });
    expect(() => interpreterFor(definition, { taskMocks: mocks })).toThrow(/add an entry for "Put"/);
  });
});
