/**
 * States that ask the client a question call the built-in `request_input` worker:
 *
 *   "Type": "Task",
 *   "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
 *   "Parameters": { "FunctionName": "${Worker_request_input}",
 *                   "Payload": { "taskToken.$": "$$.Task.Token", "request": { ... }, "key": "..." } }
 *
 * The worker must find the operation the execution runs, so the loader adds what tells it
 * to the payload: the execution's name, and the execution input's `operation` when the
 * machine gets our envelope. Both runtimes deploy or run the definition with these fields.
 */
import { isObject } from '../shared/json-values.ts';
import { listStates, taskWorker } from './local-tasks.ts';

/** The built-in worker's name, as `${Worker_request_input}` names it. */
export const REQUEST_INPUT_WORKER = 'request_input';
const WAIT_FOR_TASK_TOKEN = 'arn:aws:states:::lambda:invoke.waitForTaskToken';

export interface InjectedDefinition {
  /** The definition with the fields added (the same object when no state asks). */
  definition: unknown;
  /** Whether any state calls the worker. */
  asks: boolean;
  /** One sentence per state that calls the worker in a way it cannot work. */
  problems: string[];
}

/**
 * Adds `executionName` (and `operation`, for machines that get the envelope) to the payload
 * of every state that calls the request-input worker, in the state's query language.
 */
export function injectRequestInputContext(definition: unknown, options: { envelope: boolean }): InjectedDefinition {
  const states = listStates(definition).filter(({ state }) => state.Type === 'Task' && taskWorker(state) === REQUEST_INPUT_WORKER);
  if (states.length === 0) return { definition, asks: false, problems: [] };
  const copy = structuredClone(definition) as Record<string, unknown>;
  const problems: string[] = [];
  const topLanguage = copy.QueryLanguage === 'JSONata' ? 'JSONata' : 'JSONPath';
  for (const { name, state } of listStates(copy)) {
    if (state.Type !== 'Task' || taskWorker(state) !== REQUEST_INPUT_WORKER) continue;
    if (state.Resource !== WAIT_FOR_TASK_TOKEN) {
      problems.push(`state "${name}" calls \${Worker_request_input}, which answers only through a task token: use "Resource": "${WAIT_FOR_TASK_TOKEN}"`);
      continue;
    }
    const jsonata = (state.QueryLanguage ?? topLanguage) === 'JSONata';
    const holder = (jsonata ? state.Arguments : state.Parameters) as Record<string, unknown> | undefined;
    const payload = holder?.Payload;
    if (!isObject(payload)) {
      problems.push(`state "${name}": ${jsonata ? 'Arguments' : 'Parameters'}.Payload must be an object with taskToken and request, so the operation's fields can be added to it`);
      continue;
    }
    const hasToken = jsonata ? typeof payload.taskToken === 'string' : typeof payload['taskToken.$'] === 'string';
    if (!hasToken) {
      problems.push(`state "${name}": the Payload needs the task token, ${jsonata ? '"taskToken": "{% $states.context.Task.Token %}"' : '"taskToken.$": "$$.Task.Token"'}`);
      continue;
    }
    if (jsonata) {
      payload.executionName = '{% $states.context.Execution.Name %}';
      if (options.envelope) payload.operation = '{% $states.context.Execution.Input.operation %}';
    } else {
      payload['executionName.$'] = '$$.Execution.Name';
      if (options.envelope) payload['operation.$'] = '$$.Execution.Input.operation';
    }
  }
  return { definition: copy, asks: true, problems };
}
