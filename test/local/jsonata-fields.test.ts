/**
 * JSONata states run locally the way Step Functions runs them, field by field. Test names
 * quote the AWS developer guide ("Transforming data with JSONata in Step Functions",
 * "Passing data between states with variables", the Choice and Map state pages).
 */
import { describe, expect, it } from 'vitest';
import { jsonataMachine, runDefinition } from './jsonata-harness.ts';

const echo = async (event: unknown) => event;

describe('Arguments and Output', () => {
  it('"not-evaluated": "$customerName" — only a string that is exactly {% … %} is an expression; both query languages produce the same result', async () => {
    const seen: unknown[] = [];
    const record = async (event: unknown) => {
      seen.push(event);
      return event;
    };
    const assign = { Type: 'Pass', Assign: { customerName: 'María' }, Next: 'Task' };
    const jsonata = jsonataMachine({
      Remember: assign,
      Task: {
        Type: 'Task',
        Resource: '${Worker_record}',
        Arguments: { static: 'Hello', title: '{% $states.input.title %}', name: '{% $customerName %}', 'not-evaluated': '$customerName' },
        End: true,
      },
    });
    const jsonPath = {
      StartAt: 'Remember',
      States: {
        Remember: assign,
        Task: {
          Type: 'Task',
          Resource: '${Worker_record}',
          Parameters: { static: 'Hello', 'title.$': '$.title', 'name.$': '$customerName', 'not-evaluated': '$customerName' },
          End: true,
        },
      },
    };
    const expected = { static: 'Hello', title: 'Doctor', name: 'María', 'not-evaluated': '$customerName' };
    for (const definition of [jsonata, jsonPath]) {
      const { outcome } = await runDefinition(definition, { title: 'Doctor' }, { workers: { record } });
      expect(outcome).toEqual({ status: 'SUCCEEDED', output: expected });
    }
    expect(seen).toEqual([expected, expected]);
  });

  it('lambda:invoke: Arguments is the request and its Payload the event; $states.result is the invoke result, with Payload', async () => {
    const invoke = (extra: Record<string, unknown>) =>
      jsonataMachine({
        Invoke: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Arguments: { FunctionName: '${Worker_double}', Payload: { n: '{% $states.input.n %}' } },
          End: true,
          ...extra,
        },
      });
    const workers = { double: async (event: unknown) => ({ doubled: (event as { n: number }).n * 2 }) };
    expect((await runDefinition(invoke({ Output: '{% $states.result.Payload %}' }), { n: 21 }, { workers })).outcome).toEqual({
      status: 'SUCCEEDED',
      output: { doubled: 42 },
    });
    expect((await runDefinition(invoke({}), { n: 1 }, { workers })).outcome).toEqual({
      status: 'SUCCEEDED',
      output: { ExecutedVersion: '$LATEST', Payload: { doubled: 2 }, StatusCode: 200 },
    });
  });

  it('without Output, a Task outputs its result and a Pass state its input; Output replaces either', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({
        Keep: { Type: 'Pass', Next: 'Work' },
        Work: { Type: 'Task', Resource: '${Worker_answer}', Next: 'Shape' },
        Shape: { Type: 'Pass', Output: { answer: '{% $states.input.value %}', literal: [1, '{% 1 + 1 %}'] }, End: true },
      }),
      { ignored: true },
      { workers: { answer: async () => ({ value: 42 }) } },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { answer: 42, literal: [1, 2] } });
  });
});

describe('variables (Assign)', () => {
  it('"$states.input always refers to the original state input"; a variable is visible from the next state, not in the same state\'s Assign or Output', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({
        First: { Type: 'Pass', Assign: { x: 1 }, Next: 'Second' },
        Second: {
          Type: 'Pass',
          Assign: { x: '{% $x + 1 %}', y: '{% $x %}' },
          Output: { xSeenByOutput: '{% $x %}', input: '{% $states.input %}' },
          Next: 'Third',
        },
        Third: { Type: 'Pass', Output: { x: '{% $x %}', y: '{% $y %}', previous: '{% $states.input %}' }, End: true },
      }),
      { a: 1 },
    );
    expect(outcome).toEqual({
      status: 'SUCCEEDED',
      output: { x: 2, y: 1, previous: { xSeenByOutput: 1, input: { a: 1 } } },
    });
  });

  it('Assign in a Task reads $states.result, in a Wait and a Choice the input', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({
        Work: { Type: 'Task', Resource: '${Worker_echo}', Arguments: { v: 7 }, Assign: { fromResult: '{% $states.result.v %}' }, Next: 'Pause' },
        Pause: { Type: 'Wait', Seconds: 0, Assign: { fromWait: '{% $states.input.v %}' }, Next: 'Done' },
        Done: { Type: 'Pass', Output: '{% [$fromResult, $fromWait] %}', End: true },
      }),
      {},
      { workers: { echo } },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: [7, 7] });
  });

  it('JSONPath states read variables as $name in paths and assign them with "key.$"', async () => {
    const { outcome } = await runDefinition(
      {
        StartAt: 'Lookup',
        States: {
          Lookup: {
            Type: 'Task',
            Resource: '${Worker_echo}',
            Parameters: { 'price.$': '$.price' },
            ResultSelector: { 'doubled.$': 'States.MathAdd($.price, $.price)' },
            Assign: { 'doubled.$': '$.doubled', 'original.$': '$states.input.price' },
            ResultPath: null,
            Next: 'Use',
          },
          Use: { Type: 'Pass', Parameters: { 'doubled.$': '$doubled', 'original.$': '$original', 'input.$': '$' }, End: true },
        },
      },
      { price: 5 },
      { workers: { echo } },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { doubled: 10, original: 5, input: { price: 5 } } });
  });
});

describe('Choice rules (Condition)', () => {
  const choice = (value: unknown) =>
    runDefinition(
      jsonataMachine({
        Decide: {
          Type: 'Choice',
          Choices: [
            { Condition: '{% $states.input.n > 10 %}', Next: 'Big', Assign: { size: 'big' }, Output: { n: '{% $states.input.n %}', rule: 0 } },
            { Condition: '{% $states.input.n > 5 %}', Next: 'Big' },
          ],
          Default: 'Small',
          Assign: { size: 'small' },
          Output: { defaulted: true },
        },
        Big: { Type: 'Pass', Output: { size: '{% $size %}', input: '{% $states.input %}' }, End: true },
        Small: { Type: 'Pass', Output: { size: '{% $size %}', input: '{% $states.input %}' }, End: true },
      }),
      value,
    );

  it('the first rule whose Condition is true decides, with its own Assign and Output', async () => {
    expect((await choice({ n: 11 })).outcome).toEqual({ status: 'SUCCEEDED', output: { size: 'big', input: { n: 11, rule: 0 } } });
  });

  it("a matching rule without Output passes the input on; the state's Assign and Output apply to the Default only", async () => {
    const matched = await runDefinition(
      jsonataMachine({
        Decide: { Type: 'Choice', Choices: [{ Condition: '{% $states.input.n > 5 %}', Next: 'End' }], Default: 'End', Output: { defaulted: true } },
        End: { Type: 'Succeed' },
      }),
      { n: 6 },
    );
    expect(matched.outcome).toEqual({ status: 'SUCCEEDED', output: { n: 6 } });
    expect((await choice({ n: 1 })).outcome).toEqual({ status: 'SUCCEEDED', output: { size: 'small', input: { defaulted: true } } });
  });

  it('a Condition that is not a boolean fails with States.QueryEvaluationError', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({ Decide: { Type: 'Choice', Choices: [{ Condition: '{% "yes" %}', Next: 'End' }], Default: 'End' }, End: { Type: 'Succeed' } }),
      {},
    );
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'States.QueryEvaluationError' });
  });

  it('"If no Choices evaluate to true … and no Default is provided, the state machine will throw an error"', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({ Decide: { Type: 'Choice', Choices: [{ Condition: '{% false %}', Next: 'End' }] }, End: { Type: 'Succeed' } }),
      {},
    );
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'States.NoChoiceMatched' });
  });
});

describe('Map (Items, ItemSelector) and Parallel (Arguments)', () => {
  it('Items is an expression; ItemSelector reads $states.context.Map.Item; iterations read outer variables but their own assignments stay inside', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({
        Setup: { Type: 'Pass', Assign: { factor: 10, inner: 'outer' }, Next: 'Each' },
        Each: {
          Type: 'Map',
          Items: '{% $states.input.values[$ > 1] %}',
          ItemSelector: { index: '{% $states.context.Map.Item.Index %}', value: '{% $states.context.Map.Item.Value %}', base: '{% $states.input.base %}' },
          MaxConcurrency: '{% 1 %}',
          ItemProcessor: {
            ProcessorConfig: { Mode: 'INLINE' },
            StartAt: 'Scale',
            States: {
              Scale: { Type: 'Pass', Assign: { inner: '{% $states.input.index %}' }, Next: 'Report' },
              Report: { Type: 'Pass', Output: '{% $states.input.base + $states.input.value * $factor + $inner / 100 %}', End: true },
            },
          },
          Output: { results: '{% $states.result %}', inner: '{% $inner %}' },
          End: true,
        },
      }),
      { values: [1, 2, 3], base: 1000 },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { results: [1020, 1030.01], inner: 'outer' } });
  });

  it('Parallel branches get Arguments as input and their outputs in order as $states.result', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({
        Both: {
          Type: 'Parallel',
          Arguments: { n: '{% $states.input.n %}' },
          Branches: [
            { StartAt: 'Add', States: { Add: { Type: 'Pass', Output: '{% $states.input.n + 1 %}', End: true } } },
            { StartAt: 'Mul', States: { Mul: { Type: 'Pass', Output: '{% $states.input.n * 3 %}', End: true } } },
          ],
          Assign: { sum: '{% $sum($states.result) %}' },
          Next: 'Show',
        },
        Show: { Type: 'Pass', Output: { branches: '{% $states.input %}', sum: '{% $sum %}' }, End: true },
      }),
      { n: 4 },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { branches: [5, 12], sum: 17 } });
  });

  it('Items that are not an array fail the Map with States.QueryEvaluationError', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({ Each: { Type: 'Map', Items: '{% "nope" %}', ItemProcessor: { StartAt: 'P', States: { P: { Type: 'Pass', End: true } } }, End: true } }),
      {},
    );
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'States.QueryEvaluationError' });
  });
});

describe('$states.context, Wait and the functions Step Functions adds', () => {
  it('$states.context holds the execution, the state machine and the state', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({
        Look: {
          Type: 'Pass',
          Output: {
            id: '{% $states.context.Execution.Id %}',
            name: '{% $states.context.Execution.Name %}',
            input: '{% $states.context.Execution.Input %}',
            machine: '{% $states.context.StateMachine.Name %}',
            state: '{% $states.context.State.Name %}',
          },
          End: true,
        },
      }),
      { a: 1 },
    );
    expect(outcome).toEqual({
      status: 'SUCCEEDED',
      output: { id: 'arn:aws:states:us-east-1:000000000000:execution:m:run-1', name: 'run-1', input: { a: 1 }, machine: 'm', state: 'Look' },
    });
  });

  it('Wait takes Seconds or Timestamp as expressions, scaled like every local Wait', async () => {
    const started = Date.now();
    const { outcome } = await runDefinition(
      jsonataMachine({
        Short: { Type: 'Wait', Seconds: '{% $states.input.seconds %}', Next: 'Past' },
        Past: { Type: 'Wait', Timestamp: '{% "2000-01-01T00:00:00Z" %}', Output: '{% $states.input.seconds %}', End: true },
      }),
      { seconds: 2 },
      { waitTimeScale: 0.05 },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('$partition, $range, $hash, $parse and $uuid are available; $eval is not', async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({
        Use: {
          Type: 'Pass',
          Output: {
            partition: '{% $partition([1,2,3,4,5], 2) %}',
            range: '{% $range(0, 10, 5) %}',
            hash: '{% $hash("abc", "SHA-256") %}',
            parse: '{% $parse("{\\"a\\":[1]}") %}',
            uuid: '{% $length($uuid()) %}',
          },
          End: true,
        },
      }),
      {},
    );
    expect(outcome).toEqual({
      status: 'SUCCEEDED',
      output: {
        partition: [[1, 2], [3, 4], [5]],
        range: [0, 5, 10],
        hash: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
        parse: { a: [1] },
        uuid: 36,
      },
    });
    const evaluated = await runDefinition(jsonataMachine({ Eval: { Type: 'Pass', Output: '{% $eval("1") %}', End: true } }), {});
    expect(evaluated.outcome).toMatchObject({ status: 'FAILED', error: 'States.QueryEvaluationError', cause: expect.stringContaining('$eval') });
  });
});
