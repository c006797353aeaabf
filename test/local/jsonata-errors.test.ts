/**
 * Errors in JSONata states, as the AWS developer guide describes them: Fail states with
 * expressions, Catch with `$states.errorOutput`, States.QueryEvaluationError, Retry and timeouts.
 */
import { describe, expect, it } from 'vitest';
import { jsonataMachine, runDefinition } from './jsonata-harness.ts';

const echo = async (event: unknown) => event;

describe('Fail, Catch and errors', () => {
  it("a Fail state's Error and Cause may be expressions", async () => {
    const { outcome } = await runDefinition(
      jsonataMachine({ Stop: { Type: 'Fail', Error: '{% "Bad." & $states.input.kind %}', Cause: '{% "got " & $string($states.input.n) %}' } }),
      { kind: 'Input', n: 3 },
    );
    expect(outcome).toEqual({ status: 'FAILED', error: 'Bad.Input', cause: 'got 3' });
  });

  it('"$states.errorOutput … only available in a Catch": a catcher\'s Output and Assign read it; without Output the error output is passed on', async () => {
    const failing = async () => {
      throw Object.assign(new Error('no such order'), { name: 'OrderMissing' });
    };
    const { outcome } = await runDefinition(
      jsonataMachine({
        Work: {
          Type: 'Task',
          Resource: '${Worker_failing}',
          Catch: [
            { ErrorEquals: ['OrderMissing'], Assign: { error: '{% $states.errorOutput.Error %}' }, Output: { input: '{% $states.input %}' }, Next: 'Handle' },
          ],
          End: true,
        },
        Handle: { Type: 'Pass', Output: { error: '{% $error %}', input: '{% $states.input.input %}' }, Next: 'Again' },
        Again: { Type: 'Task', Resource: '${Worker_failing}', Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Last' }], End: true },
        Last: { Type: 'Pass', Output: { error: '{% $states.input.Error %}', cause: '{% $parse($states.input.Cause).errorMessage %}' }, End: true },
      }),
      { id: 7 },
      { workers: { failing } },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { error: 'OrderMissing', cause: 'no such order' } });
  });

  it('an expression that returns nothing fails the state with States.QueryEvaluationError naming the field, and a Catch on it fires', async () => {
    const missing = { Out: { Type: 'Pass', Output: { v: '{% $states.input.absent %}' }, End: true } };
    expect((await runDefinition(jsonataMachine(missing), {})).outcome).toEqual({
      status: 'FAILED',
      error: 'States.QueryEvaluationError',
      cause: "The JSONata expression '$states.input.absent' specified for the field 'Output/v' returned nothing (undefined).",
    });
    const caught = await runDefinition(
      jsonataMachine({
        Work: {
          Type: 'Task',
          Resource: '${Worker_echo}',
          Output: '{% $states.result.absent %}',
          Catch: [{ ErrorEquals: ['States.QueryEvaluationError'], Output: '{% $states.errorOutput.Error %}', Next: 'Done' }],
          End: true,
        },
        Done: { Type: 'Succeed' },
      }),
      {},
      { workers: { echo } },
    );
    expect(caught.outcome).toEqual({ status: 'SUCCEEDED', output: 'States.QueryEvaluationError' });
  });

  it('a Task that outlives its TimeoutSeconds (here an expression) fails with States.Timeout, which States.TaskFailed does not catch', async () => {
    const hang = () => new Promise<never>(() => undefined);
    const { outcome } = await runDefinition(
      jsonataMachine({
        Slow: {
          Type: 'Task',
          Resource: '${Worker_hang}',
          TimeoutSeconds: '{% $states.input.limit %}',
          Catch: [{ ErrorEquals: ['States.TaskFailed'], Next: 'Caught' }],
          End: true,
        },
        Caught: { Type: 'Succeed' },
      }),
      { limit: 1 },
      { workers: { hang } },
    );
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
  });

  it('Retry runs the Task again before Catch; $states.context.State.RetryCount counts the attempts', async () => {
    let calls = 0;
    const flaky = async () => {
      calls++;
      if (calls < 2) throw Object.assign(new Error('try again'), { name: 'Flaky' });
      return { calls };
    };
    const { outcome } = await runDefinition(
      jsonataMachine({
        Work: {
          Type: 'Task',
          Resource: '${Worker_flaky}',
          Retry: [{ ErrorEquals: ['Flaky'], IntervalSeconds: 1, MaxAttempts: 2, BackoffRate: 1, MaxDelaySeconds: 1, JitterStrategy: 'FULL' }],
          Output: { result: '{% $states.result %}', retries: '{% $states.context.State.RetryCount %}' },
          End: true,
        },
      }),
      {},
      { workers: { flaky } },
    );
    expect(outcome).toEqual({ status: 'SUCCEEDED', output: { result: { calls: 2 }, retries: 1 } });
  });
});
