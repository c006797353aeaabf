/**
 * The local runtime runs every machine on its own ASL interpreter (asl-interpreter.ts);
 * aws-local-stepfunctions, a maintained implementation of JSONPath ASL, is the reference it is
 * held against (reference-engine.ts). Each JSONPath definition here runs through both, with
 * the same worker handlers and the same mocks.json answers, and both must end the same way:
 * the same output, or the same Error and Cause, with the same calls made to the Task resources.
 */
import { describe, expect, it } from 'vitest';
import { parseToolMocks } from '../../lambdas/tools/tool-mocks.ts';
import { createTaskMocks } from '../../local/stepfunctions/sfn-facade-mocks.ts';
import { interpreterFor, runDefinition, type LocalEngine } from './jsonata-harness.ts';

const ENGINES: readonly LocalEngine[] = ['aws-local-stepfunctions', 'asl-interpreter'];
const GET_ITEM = 'arn:aws:states:::dynamodb:getItem';
const PUT_ITEM = 'arn:aws:states:::dynamodb:putItem';

interface Case {
  definition: object;
  input: unknown;
  /** mocks.json's MockedResponses, by state name (each state's response is named after it). */
  mocked?: Record<string, Record<string, unknown>>;
}

/** Runs `c` on one engine; the Task calls are recorded in the order the workers and mocks saw them. */
async function runOn(engine: LocalEngine, c: Case) {
  const calls: Array<{ task: string; input: unknown }> = [];
  const mocksFile = {
    StateMachines: { m: { TestCases: { Default: Object.fromEntries(Object.keys(c.mocked ?? {}).map((state) => [state, `${state}Response`])) } } },
    MockedResponses: Object.fromEntries(Object.entries(c.mocked ?? {}).map(([state, responses]) => [`${state}Response`, responses])),
  };
  const { mocks, problems } = parseToolMocks(mocksFile, ['m']);
  expect(problems).toEqual([]);
  const facadeMocks = createTaskMocks(mocks!);
  const { outcome, events } = await runDefinition(c.definition, c.input, {
    engine,
    taskMocks: {
      handlerFor(state) {
        const handler = facadeMocks.handlerFor(state);
        if (!handler) return undefined;
        return async (input) => {
          calls.push({ task: state, input });
          return handler(input);
        };
      },
    },
    workers: {
      double: async (event) => {
        calls.push({ task: 'double', input: event });
        return { doubled: 2 * (event as { value: number }).value };
      },
    },
  });
  const entered = events.flatMap((event) => (event.type === 'StateEntered' ? [event.state.name] : []));
  return { outcome, calls, entered };
}

/** Runs `c` through both engines and expects them to agree; returns the common result. */
async function agree(c: Case) {
  const [library, ours] = await Promise.all(ENGINES.map((engine) => runOn(engine, c)));
  expect(ours!.outcome, 'outcome').toEqual(library!.outcome);
  // Map iterations and Parallel branches interleave differently; each engine keeps one order.
  expect([...ours!.calls].sort(byJson), 'task calls').toEqual([...library!.calls].sort(byJson));
  expect([...ours!.entered].sort(), 'states entered').toEqual([...library!.entered].sort());
  return library!;
}

const byJson = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));

describe('one JSONPath definition, two engines', () => {
  it('Pass and Choice with InputPath, Parameters, intrinsic functions, ResultSelector, ResultPath and OutputPath end alike', async () => {
    const { outcome } = await agree({
      input: { order: { id: 'o-7', items: [3, 1, 3, 2], note: '{"rush":true}' }, limit: 5 },
      definition: {
        StartAt: 'Shape',
        States: {
          Shape: {
            Type: 'Pass',
            InputPath: '$.order',
            Parameters: {
              'label.$': "States.Format('order {} has {} items', $.id, States.ArrayLength($.items))",
              'unique.$': 'States.ArrayUnique($.items)',
              'pairs.$': 'States.ArrayPartition($.items, 2)',
              'hasThree.$': 'States.ArrayContains($.items, 3)',
              'note.$': 'States.StringToJson($.note)',
              'sum.$': 'States.MathAdd(States.ArrayGetItem($.items, 0), 4)',
              'range.$': 'States.ArrayRange(1, 9, 4)',
              'encoded.$': "States.Base64Encode('async-mcp')",
              'hash.$': "States.Hash('async-mcp', 'SHA-256')",
              'json.$': 'States.JsonToString($.items)',
              'name.$': '$$.Execution.Name',
              constant: 'kept',
            },
            ResultPath: '$.shaped',
            Next: 'Route',
          },
          Route: {
            Type: 'Choice',
            Choices: [
              {
                And: [{ Variable: '$.shaped.hasThree', BooleanEquals: true }, { Not: { Variable: '$.shaped.sum', NumericGreaterThanPath: '$.limit' } }],
                Next: 'Small',
              },
              {
                Or: [
                  { Variable: '$.shaped.label', StringMatches: 'order * has 4 items' },
                  { Variable: '$.missing', IsPresent: true },
                ],
                Next: 'Large',
              },
            ],
            Default: 'Small',
          },
          Small: { Type: 'Pass', Result: 'small', ResultPath: '$.size', End: true },
          Large: {
            Type: 'Pass',
            Parameters: { 'label.$': '$.shaped.label', 'unique.$': '$.shaped.unique', 'rest.$': '$.shaped' },
            OutputPath: '$.rest',
            End: true,
          },
        },
      },
    });
    expect(outcome).toMatchObject({ status: 'SUCCEEDED', output: { label: 'order o-7 has 4 items', unique: [3, 1, 2], sum: 7, range: [1, 5, 9] } });
  });

  it('an inline Map over ItemsPath with ItemSelector and $$.Map.Item, beside a Parallel, ends alike', async () => {
    const { outcome } = await agree({
      input: { batch: 'b1', values: [1, 2, 3] },
      definition: {
        StartAt: 'Both',
        States: {
          Both: {
            Type: 'Parallel',
            Branches: [
              {
                StartAt: 'Each',
                States: {
                  Each: {
                    Type: 'Map',
                    ItemsPath: '$.values',
                    MaxConcurrency: 2,
                    ItemSelector: { 'value.$': '$$.Map.Item.Value', 'index.$': '$$.Map.Item.Index', 'batch.$': '$.batch' },
                    ItemProcessor: {
                      ProcessorConfig: { Mode: 'INLINE' },
                      StartAt: 'Double',
                      States: {
                        Double: {
                          Type: 'Task',
                          Resource: 'arn:aws:states:::lambda:invoke',
                          Parameters: { FunctionName: '${Worker_double}', 'Payload.$': '$' },
                          ResultSelector: { 'doubled.$': '$.Payload.doubled' },
                          ResultPath: '$.result',
                          End: true,
                        },
                      },
                    },
                    End: true,
                  },
                },
              },
              { StartAt: 'Count', States: { Count: { Type: 'Pass', Parameters: { 'count.$': 'States.ArrayLength($.values)' }, End: true } } },
            ],
            ResultSelector: { 'items.$': '$[0]', 'count.$': '$[1].count' },
            ResultPath: '$.summary',
            End: true,
          },
        },
      },
    });
    expect(outcome).toMatchObject({ status: 'SUCCEEDED', output: { summary: { count: 3, items: [{ index: 0, value: 1, result: { doubled: 2 } }, {}, {}] } } });
  });

  it('a mocked Task that fails, is retried, then caught by a Catch that keeps the error in ResultPath ends alike', async () => {
    const { outcome, calls } = await agree({
      input: { id: '42' },
      mocked: {
        Get: {
          '0': { Throw: { Error: 'DynamoDB.ProvisionedThroughputExceededException', Cause: 'slow down' } },
          '1': { Return: { Item: { id: { S: '42' } } } },
        },
        Put: { '0': { Throw: { Error: 'DynamoDB.ConditionalCheckFailedException', Cause: 'already there' } } },
      },
      definition: {
        StartAt: 'Get',
        States: {
          Get: {
            Type: 'Task',
            Resource: GET_ITEM,
            Parameters: { TableName: 'items', Key: { id: { 'S.$': '$.id' } } },
            Retry: [{ ErrorEquals: ['DynamoDB.ProvisionedThroughputExceededException'], IntervalSeconds: 1, MaxAttempts: 1 }],
            ResultSelector: { 'found.$': '$.Item.id.S' },
            ResultPath: '$.get',
            Next: 'Put',
          },
          Put: {
            Type: 'Task',
            Resource: PUT_ITEM,
            Parameters: { TableName: 'items', Item: { 'id.$': '$.get.found' } },
            Retry: [{ ErrorEquals: ['States.Timeout'], MaxAttempts: 3 }],
            Catch: [
              { ErrorEquals: ['DynamoDB.ResourceNotFoundException'], Next: 'Unreachable' },
              { ErrorEquals: ['States.TaskFailed'], ResultPath: '$.putError', Next: 'Done' },
            ],
            End: true,
          },
          Unreachable: { Type: 'Fail', Error: 'Wrong.Catcher' },
          Done: { Type: 'Succeed' },
        },
      },
    });
    expect(outcome).toEqual({
      status: 'SUCCEEDED',
      output: { id: '42', get: { found: '42' }, putError: { Error: 'DynamoDB.ConditionalCheckFailedException', Cause: 'already there' } },
    });
    expect(calls.map((call) => call.task)).toEqual(['Get', 'Get', 'Put']);
  });

  it('a task error no Retry or Catch matches, and a Fail state, fail the execution alike', async () => {
    const failing = await agree({
      input: {},
      mocked: { Get: { '0': { Throw: { Error: 'Custom.Broken', Cause: 'the mock says no' } } } },
      definition: {
        StartAt: 'Get',
        States: {
          Get: { Type: 'Task', Resource: GET_ITEM, Parameters: { TableName: 't' }, Catch: [{ ErrorEquals: ['Other.Error'], Next: 'Never' }], End: true },
          Never: { Type: 'Succeed' },
        },
      },
    });
    expect(failing.outcome).toEqual({ status: 'FAILED', error: 'Custom.Broken', cause: 'the mock says no' });

    const refused = await agree({
      input: { reason: 'no such dataset' },
      definition: {
        StartAt: 'Check',
        States: {
          Check: { Type: 'Choice', Choices: [{ Variable: '$.reason', IsPresent: true, Next: 'Refuse' }], Default: 'Fine' },
          Refuse: { Type: 'Fail', Error: 'Mcp.ProtocolError', Cause: '{"code":-32602,"message":"no such dataset"}' },
          Fine: { Type: 'Succeed' },
        },
      },
    });
    expect(refused.outcome).toEqual({ status: 'FAILED', error: 'Mcp.ProtocolError', cause: '{"code":-32602,"message":"no such dataset"}' });
  });

  it('a Wait of SecondsPath, a Task naming its worker directly and a Choice that falls to its Default end alike', async () => {
    const { outcome } = await agree({
      input: { value: 4, pause: 0 },
      definition: {
        StartAt: 'Pause',
        States: {
          Pause: { Type: 'Wait', SecondsPath: '$.pause', Next: 'Double' },
          Double: { Type: 'Task', Resource: '${Worker_double}', InputPath: '$', ResultPath: '$.out', TimeoutSeconds: 30, Next: 'Check' },
          Check: {
            Type: 'Choice',
            Choices: [{ Variable: '$.out.doubled', NumericLessThan: 5, Next: 'Low' }],
            Default: 'High',
          },
          Low: { Type: 'Fail', Error: 'Too.Low' },
          High: {
            Type: 'Pass',
            Parameters: { 'doubled.$': '$.out.doubled', 'text.$': "States.Format('{} doubled is {}', $.value, $.out.doubled)" },
            End: true,
          },
        },
      },
    });
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { doubled: 8, text: '4 doubled is 8' } });
  });
});

describe('the engine a JSONPath definition runs on', () => {
  it("a JSONPath state reads $$.State.Name and $$.State.RetryCount as Step Functions gives them: the state's name and its retry count", async () => {
    // The context object's State is { EnteredTime, Name, RetryCount } (Step Functions developer guide, "Context object").
    const calls: unknown[] = [];
    let call = 0;
    const { outcome } = await runDefinition(
      {
        StartAt: 'Get',
        States: {
          Get: {
            Type: 'Task',
            Resource: GET_ITEM,
            Parameters: { TableName: 't', 'state.$': '$$.State.Name', 'attempt.$': '$$.State.RetryCount' },
            Retry: [{ ErrorEquals: ['Busy'], IntervalSeconds: 1, MaxAttempts: 1 }],
            End: true,
          },
        },
      },
      {},
      {
        taskMocks: {
          handlerFor: () => async (input) => {
            calls.push(input);
            if (call++ === 0) throw Object.assign(new Error('try again'), { name: 'Busy' });
            return { ok: true };
          },
        },
      },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { ok: true } });
    expect(calls).toEqual([
      { TableName: 't', state: 'Get', attempt: 0 },
      { TableName: 't', state: 'Get', attempt: 1 },
    ]);
  });

  it('a JSONPath definition that runs on the ASL interpreter is still checked as CreateStateMachine checks it: a Next naming no state refuses to load', () => {
    const definition = { StartAt: 'A', States: { A: { Type: 'Pass', Parameters: { 'name.$': '$$.State.Name' }, Next: 'Nowhere' } } };
    expect(() => interpreterFor(definition)).toThrow(/state machine m: .*Nowhere/s);
  });

  it('a Pass state\'s Result of 0, "", false or null is its result, placed by ResultPath, as the ASL spec says ("its value is treated as the output of a virtual task")', async () => {
    for (const result of [0, '', false, null]) {
      const placed = await runDefinition({ StartAt: 'A', States: { A: { Type: 'Pass', Result: result, ResultPath: '$.r', End: true } } }, { x: 1 });
      expect(placed.outcome, JSON.stringify(result)).toEqual({ status: 'SUCCEEDED', output: { x: 1, r: result } });
      const whole = await runDefinition({ StartAt: 'A', States: { A: { Type: 'Pass', Result: result, End: true } } }, { x: 1 });
      expect(whole.outcome, JSON.stringify(result)).toEqual({ status: 'SUCCEEDED', output: result });
    }
  });
});

describe('definitions the ASL interpreter refuses, as CreateStateMachine does', () => {
  it('a JSONata machine whose Next, Default, Choice or Catch Next names no state of its own graph refuses to load', () => {
    const pass = { Type: 'Pass', End: true };
    const cases: Array<[object, RegExp]> = [
      [{ QueryLanguage: 'JSONata', StartAt: 'A', States: { A: { Type: 'Pass', Next: 'Nowhere' } } }, /Missing 'Next' target: Nowhere at \/States\/A\/Next/],
      [{ QueryLanguage: 'JSONata', StartAt: 'Gone', States: { A: pass } }, /Missing 'Next' target: Gone at \/StartAt/],
      [
        { QueryLanguage: 'JSONata', StartAt: 'C', States: { C: { Type: 'Choice', Choices: [{ Condition: '{% true %}', Next: 'A' }], Default: 'Z' }, A: pass } },
        /Missing 'Next' target: Z at \/States\/C\/Default/,
      ],
      [
        {
          QueryLanguage: 'JSONata',
          StartAt: 'P',
          States: { P: { Type: 'Parallel', Branches: [{ StartAt: 'B', States: { B: { Type: 'Pass', Next: 'Out' } } }], Next: 'Out' }, Out: pass },
        },
        /Missing 'Next' target: Out at \/States\/P\/Branches\[0\]\/States\/B\/Next/,
      ],
      [
        {
          QueryLanguage: 'JSONata',
          StartAt: 'T',
          States: { T: { Type: 'Task', Resource: '${Worker_double}', Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Nope' }], End: true } },
        },
        /Missing 'Next' target: Nope at \/States\/T\/Catch\[0\]\/Next/,
      ],
    ];
    for (const [definition, message] of cases) expect(() => interpreterFor(definition)).toThrow(message);
  });
});
