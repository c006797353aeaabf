/**
 * Whole JSONata definitions on the local runtime: one exported the way Workflow Studio writes
 * it loads and runs unchanged through the tool loader and the Step Functions facade; mixed
 * JSONPath/JSONata machines; task tokens; stopping and timing out; and the definitions Step
 * Functions refuses at creation, refused at load.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetExecutionHistoryCommand, SendTaskSuccessCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it, vi } from 'vitest';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { TaskTokens } from '../../local/stepfunctions/sfn-facade-task-tokens.ts';
import { interpreterFor, jsonataMachine, RUN_CONTEXT, runDefinition } from './jsonata-harness.ts';
import { useFacadeHarness } from './sfn-facade-harness.ts';

const { start } = useFacadeHarness();

/** As the console exports it: QueryLanguage last, spaces in state names, Lambda retry boilerplate. */
const WORKFLOW_STUDIO_DEFINITION = {
  Comment: 'A description of my state machine',
  StartAt: 'Set up',
  States: {
    'Set up': {
      Type: 'Pass',
      Next: 'Anything to do?',
      Assign: { orderId: '{% $states.input.arguments.orderId %}', lines: '{% $states.input.arguments.lines %}' },
    },
    'Anything to do?': {
      Type: 'Choice',
      Choices: [{ Next: 'Price lines', Condition: '{% $count($lines) > 0 %}' }],
      Default: 'Nothing to price',
    },
    'Price lines': {
      Type: 'Map',
      ItemProcessor: {
        ProcessorConfig: { Mode: 'INLINE' },
        StartAt: 'Lambda Invoke',
        States: {
          'Lambda Invoke': {
            Type: 'Task',
            Resource: 'arn:aws:states:::lambda:invoke',
            Output: '{% $states.result.Payload %}',
            Arguments: { FunctionName: '${Worker_calculate}', Payload: '{% $states.input %}' },
            Retry: [
              {
                ErrorEquals: ['Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException', 'Lambda.TooManyRequestsException'],
                IntervalSeconds: 1,
                MaxAttempts: 3,
                BackoffRate: 2,
                JitterStrategy: 'FULL',
              },
            ],
            End: true,
          },
        },
      },
      Next: 'Success',
      Items: '{% $lines %}',
      ItemSelector: { a: '{% $states.context.Map.Item.Value.quantity %}', b: '{% $states.context.Map.Item.Value.price %}', op: 'mul' },
      Output: { orderId: '{% $orderId %}', total: '{% $sum($states.result.result) %}' },
    },
    Success: { Type: 'Succeed' },
    'Nothing to price': { Type: 'Fail', Error: 'NothingToPrice', Cause: '{% "order " & $orderId & " has no lines" %}' },
  },
  QueryLanguage: 'JSONata',
};

const calculate = async (event: unknown) => {
  const { a, b } = event as { a: number; b: number };
  return { result: a * b };
};

describe('a definition exported by Workflow Studio', () => {
  it('loads through the tool loader and runs unchanged on the facade, with JSONata, Assign, Choice on Condition, Map over an expression and an Output expression', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'jsonata-tools-'));
    try {
      await mkdir(join(dir, 'price_order'));
      const tool = { name: 'price_order', description: 'Prices an order', inputSchema: { type: 'object' }, invocation: 'async' };
      await writeFile(join(dir, 'price_order', 'tool.json'), JSON.stringify(tool));
      await writeFile(join(dir, 'price_order', 'definition.asl.json'), JSON.stringify(WORKFLOW_STUDIO_DEFINITION, null, 2));
      const [folder] = await loadToolFolders(dir);
      expect(folder!.workers).toEqual(['calculate']);

      const { facade, client, describeUntilDone } = await start({
        stateMachines: [{ name: 'price_order', workflowType: 'STANDARD', definitionText: folder!.definitionText! }],
        resolveWorker: () => calculate,
      });
      const arguments_ = {
        orderId: 'o-1',
        lines: [
          { quantity: 2, price: 5 },
          { quantity: 3, price: 7 },
        ],
      };
      const started = await client.send(
        new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('price_order'), input: JSON.stringify({ arguments: arguments_ }) }),
      );
      const done = await describeUntilDone(started.executionArn!);
      expect(done.status).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!)).toEqual({ orderId: 'o-1', total: 31 });
      const history = await client.send(new GetExecutionHistoryCommand({ executionArn: started.executionArn! }));
      expect(history.events!.map((event) => event.type)).toEqual(
        expect.arrayContaining([
          'PassStateEntered',
          'ChoiceStateExited',
          'MapIterationSucceeded',
          'TaskStateExited',
          'SucceedStateEntered',
          'ExecutionSucceeded',
        ]),
      );

      const empty = await client.send(
        new StartExecutionCommand({
          stateMachineArn: facade.stateMachineArn('price_order'),
          input: JSON.stringify({ arguments: { orderId: 'o-2', lines: [] } }),
        }),
      );
      expect(await describeUntilDone(empty.executionArn!)).toMatchObject({ status: 'FAILED', error: 'NothingToPrice', cause: 'order o-2 has no lines' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('mixed JSONPath and JSONata machines', () => {
  it('a JSONPath machine may turn single states to JSONata; variables cross between the two', async () => {
    const { outcome } = await runDefinition(
      {
        StartAt: 'Path',
        States: {
          Path: {
            Type: 'Pass',
            Parameters: { 'total.$': 'States.MathAdd($.a, $.b)', 'label.$': "States.Format('sum of {} and {}', $.a, $.b)" },
            Assign: { 'total.$': '$.total' },
            Next: 'Ata',
          },
          Ata: {
            Type: 'Pass',
            QueryLanguage: 'JSONata',
            Output: { total: '{% $total %}', label: '{% $states.input.label %}', doubled: '{% $total * 2 %}' },
            Assign: { doubled: '{% $total * 2 %}' },
            Next: 'Back',
          },
          Back: { Type: 'Choice', Choices: [{ Variable: '$doubled', NumericGreaterThan: 5, Next: 'Big' }], Default: 'Small' },
          Big: { Type: 'Pass', Result: 'big', ResultPath: '$.size', End: true },
          Small: { Type: 'Pass', Result: 'small', ResultPath: '$.size', End: true },
        },
      },
      { a: 2, b: 3 },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { total: 5, label: 'sum of 2 and 3', doubled: 10, size: 'big' } });
  });

  it('"QueryLanguage can not be JSONPath if set to JSONata for whole state machine", and each language\'s fields stay its own', () => {
    expect(() => interpreterFor(jsonataMachine({ P: { Type: 'Pass', QueryLanguage: 'JSONPath', End: true } }))).toThrow(/state "P".*can not be 'JSONPath'/);
    expect(() => interpreterFor(jsonataMachine({ P: { Type: 'Pass', OutputPath: '$.a', End: true } }))).toThrow(/state "P".*field 'OutputPath'/);
    expect(() => interpreterFor({ StartAt: 'P', States: { P: { Type: 'Pass', QueryLanguage: 'JSONPath', Output: '{% 1 %}', End: true } } })).toThrow(
      /field 'Output'/,
    );
    expect(() => interpreterFor(jsonataMachine({ P: { Type: 'Pass', Output: '{% $states.input.[ %}', End: true } }))).toThrow(/state "P".*Output.*invalid/);
    expect(() => interpreterFor(jsonataMachine({ P: { Type: 'Pass', Assign: { states: 1 }, End: true } }))).toThrow(/"states" is a reserved variable name/);
    const distributed = {
      Type: 'Map',
      ItemReader: { Resource: 'arn:aws:states:::s3:getObject' },
      ItemProcessor: { StartAt: 'P', States: { P: { Type: 'Pass', End: true } } },
      End: true,
    };
    expect(() => interpreterFor(jsonataMachine({ M: distributed }))).toThrow(/state "M".*ItemReader.*does not run locally/);
  });
});

describe('task tokens, stopping and timing out', () => {
  it('a JSONata .waitForTaskToken Task hands $states.context.Task.Token to its worker and resumes with the answer', async () => {
    const tokens = new TaskTokens();
    const seen: string[] = [];
    const ask = async (event: unknown) => {
      seen.push((event as { token: string }).token);
      return null;
    };
    const definition = jsonataMachine({
      Ask: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
        Arguments: { FunctionName: '${Worker_ask}', Payload: { token: '{% $states.context.Task.Token %}' } },
        Output: { answer: '{% $states.result.answer %}' },
        End: true,
      },
    });
    const run = interpreterFor(definition, { tokens, workers: { ask } }).run({}, RUN_CONTEXT, () => undefined);
    await vi.waitFor(() => expect(seen).toHaveLength(1));
    tokens.succeed(seen[0]!, JSON.stringify({ answer: 'yes' }));
    expect(await run.outcome).toEqual({ status: 'SUCCEEDED', output: { answer: 'yes' } });
  });

  it('the same through the facade: SendTaskSuccess answers a token read in a JSONata state', async () => {
    const seen: string[] = [];
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'ask',
          workflowType: 'STANDARD',
          definitionText: JSON.stringify(
            jsonataMachine({
              Ask: {
                Type: 'Task',
                Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
                Arguments: { FunctionName: '${Worker_ask}', Payload: { token: '{% $states.context.Task.Token %}' } },
                End: true,
              },
            }),
          ),
        },
      ],
      resolveWorker: () => async (event) => {
        seen.push((event as { token: string }).token);
        return null;
      },
    });
    const started = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('ask'), input: '{}' }));
    await vi.waitFor(() => expect(seen).toHaveLength(1));
    await client.send(new SendTaskSuccessCommand({ taskToken: seen[0]!, output: '{"ok":true}' }));
    expect(await describeUntilDone(started.executionArn!)).toMatchObject({ status: 'SUCCEEDED', output: '{"ok":true}' });
  });

  it("abort ends a waiting run as ABORTED; the machine's TimeoutSeconds ends it as TIMED_OUT", async () => {
    const waiting = jsonataMachine({ Sleep: { Type: 'Wait', Seconds: 60, End: true } });
    const run = interpreterFor(waiting).run({}, RUN_CONTEXT, () => undefined);
    run.abort();
    expect(await run.outcome).toEqual({ status: 'ABORTED' });
    const { outcome } = await runDefinition({ ...waiting, TimeoutSeconds: 1 }, {});
    expect(outcome).toEqual({ status: 'TIMED_OUT' });
  });
});
