/**
 * Runs a tool's `mocks.json` (the AWS Step Functions Local mock format) for the local
 * interpreter: each execution gets fresh handlers, and a state's handler counts that
 * state's invocations within its execution (retries included), so `"0"` answers the first
 * call and `"1-2"` the second and third. A Return resolves with its value; a Throw rejects
 * with an Error whose name is the Error and whose message is the Cause, as Step Functions
 * reports a failed task.
 */
import type { MockedResponse, ToolMocks } from '../../lambdas/tools/tool-mocks.ts';
import { TaskError } from './sfn-facade-errors.ts';

/** The interpreter's `taskMocks` option. */
export interface TaskMocks {
  /** A new handler, with its own invocation count, for one execution of the state; undefined when the state is not mocked. */
  handlerFor(stateName: string): ((input: unknown) => Promise<unknown>) | undefined;
}

/** Task mocks from a tool's resolved test case. */
export function createTaskMocks(mocks: ToolMocks): TaskMocks {
  return {
    handlerFor(stateName) {
      const mocked = mocks.states.get(stateName);
      if (!mocked) return undefined;
      let invocation = 0;
      return async () => {
        const index = invocation++;
        const response = mocked.byInvocation[index];
        if (!response) {
          throw new TaskError(
            'States.Runtime',
            `mocks.json: MockedResponses.${mocked.response} answers invocations 0-${mocked.byInvocation.length - 1} of state "${stateName}"; ` +
              `this execution called it a ${ordinal(index + 1)} time`,
          );
        }
        return answer(response);
      };
    },
  };
}

function answer(response: MockedResponse): unknown {
  if ('Return' in response) return structuredClone(response.Return);
  throw new TaskError(response.Throw.Error, response.Throw.Cause ?? '');
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
