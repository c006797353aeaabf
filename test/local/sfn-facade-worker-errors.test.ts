/** How a worker that throws fails its Task on the local Step Functions facade: the way a Lambda function error does in AWS. */
import { StartExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { lambdaErrorPayload } from '../../local/stepfunctions/lambda-function-error.ts';
import { definition, input, SECRET, useFacadeHarness, ValidationError } from './sfn-facade-harness.ts';

const { start } = useFacadeHarness();

describe('local Step Functions facade: worker errors', () => {
  it('a worker that throws fails the execution the way a Lambda error does: Error = errorType, Cause = {errorType, errorMessage, trace} with source paths', async () => {
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [{ name: 'bad', workflowType: 'STANDARD', definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_bad}', End: true } }) }],
      resolveWorker: () => async () => {
        throw new ValidationError('quantity must be positive');
      },
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('bad'), input: input({ q: SECRET }) }));
    const described = await describeUntilDone(executionArn!);
    expect(described.status).toBe('FAILED');
    expect(described.error).toBe('ValidationError');
    const cause = JSON.parse(described.cause!) as { errorType: string; errorMessage: string; trace: string[] };
    expect(Object.keys(cause)).toEqual(['errorType', 'errorMessage', 'trace']);
    expect(cause).toMatchObject({ errorType: 'ValidationError', errorMessage: 'quantity must be positive' });
    // The stack, line by line, as the Node.js runtime sends it: it names the source file that threw.
    expect(cause.trace[0]).toBe('ValidationError: quantity must be positive');
    expect(cause.trace.some((line) => line.includes(import.meta.filename))).toBe(true);
    expect(described.output).toBeUndefined();
  });

  it('Retry and Catch match on the worker error name', async () => {
    let attempts = 0;
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'guarded',
          workflowType: 'STANDARD',
          definitionText: definition({
            Flaky: {
              Type: 'Task',
              Resource: '${Worker_flaky}',
              Retry: [{ ErrorEquals: ['Throttled'], IntervalSeconds: 1, MaxAttempts: 1 }],
              Next: 'Invalid',
            },
            Invalid: {
              Type: 'Task',
              Resource: '${Worker_invalid}',
              Catch: [
                { ErrorEquals: ['Other'], Next: 'Wrong' },
                { ErrorEquals: ['ValidationError'], ResultPath: '$.failure', Next: 'Handled' },
              ],
              End: true,
            },
            Wrong: { Type: 'Fail', Error: 'WrongCatcher' },
            Handled: { Type: 'Pass', End: true },
          }),
        },
      ],
      resolveWorker: (worker) =>
        worker === 'flaky'
          ? async () => {
              attempts++;
              if (attempts === 1) throw Object.assign(new Error('slow down'), { name: 'Throttled' });
              return { ok: true };
            }
          : async () => {
              throw new ValidationError('bad input');
            },
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('guarded') }));
    const described = await describeUntilDone(executionArn!);
    expect(described.status).toBe('SUCCEEDED');
    expect(attempts).toBe(2);
    const output = JSON.parse(described.output!) as { ok: boolean; failure: { Error: string; Cause: string } };
    expect(output.ok).toBe(true);
    expect(output.failure.Error).toBe('ValidationError');
    expect(JSON.parse(output.failure.Cause)).toMatchObject({ errorType: 'ValidationError', errorMessage: 'bad input', trace: expect.any(Array) });
  });

  it('a lambda:invoke Task that throws fails the same way: Error = errorType, Cause = the JSON payload with its trace', async () => {
    class QuotaExceeded extends Error {
      override name = 'QuotaExceeded';
    }
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'invoke',
          workflowType: 'STANDARD',
          definitionText: definition({
            Work: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: '${Worker_quota}', 'Payload.$': '$' }, End: true },
          }),
        },
      ],
      resolveWorker: () => async () => {
        throw new QuotaExceeded('no more today');
      },
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('invoke'), input: input({ q: SECRET }) }));
    const described = await describeUntilDone(executionArn!);
    expect(described).toMatchObject({ status: 'FAILED', error: 'QuotaExceeded' });
    const cause = JSON.parse(described.cause!) as { errorType: string; errorMessage: string; trace: string[] };
    expect(cause).toMatchObject({ errorType: 'QuotaExceeded', errorMessage: 'no more today' });
    expect(cause.trace[0]).toBe('QuotaExceeded: no more today');
    expect(cause.trace.some((line) => line.includes(import.meta.filename))).toBe(true);
  });

  it('a worker that throws something other than an Error fails with errorType = its type and an empty trace, as the Node.js runtime reports it', async () => {
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [{ name: 'odd', workflowType: 'STANDARD', definitionText: definition({ Work: { Type: 'Task', Resource: '${Worker_odd}', End: true } }) }],
      resolveWorker: () => async () => {
        throw 'out of cheese';
      },
    });
    const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('odd') }));
    const described = await describeUntilDone(executionArn!);
    expect(described.error).toBe('string');
    expect(JSON.parse(described.cause!)).toEqual({ errorType: 'string', errorMessage: 'out of cheese', trace: [] });
  });

  it("the runtime's payload rules: an Error look-alike counts as an Error, a nameless Error is 'Error', DEL is written %7F", () => {
    const lookAlike = { name: 'Remote', message: 'far away', stack: 'Remote: far away\n    at remote (/var/task/index.mjs:1:1)' };
    expect(lambdaErrorPayload(lookAlike)).toEqual({
      errorType: 'Remote',
      errorMessage: 'far away',
      trace: ['Remote: far away', '    at remote (/var/task/index.mjs:1:1)'],
    });
    const nameless = Object.assign(new Error('no name'), { name: '' });
    expect(lambdaErrorPayload(nameless).errorType).toBe('Error');
    expect(lambdaErrorPayload(new Error('a\x7Fb')).errorMessage).toBe('a%7Fb');
    expect(lambdaErrorPayload({ message: 'half an error' })).toEqual({ errorType: 'object', errorMessage: '[object Object]', trace: [] });
  });
});
