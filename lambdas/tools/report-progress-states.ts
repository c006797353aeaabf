/**
 * States that report progress or log lines call the built-in `report_progress` worker:
 *
 *   "Type": "Task", "Resource": "${Worker_report_progress}", "ResultPath": null,
 *   "Parameters": { "progress.$": "$.done", "total": 10, "message": "..." }     (or { "level": "info", "data": ... })
 *
 * (or `arn:aws:states:::lambda:invoke` with the same object as `Payload`). As for questions,
 * the loader adds the execution's name and, for machines that get our envelope, its
 * `operation`, so the worker finds the record.
 */
import { isObject } from '../shared/json-values.ts';
import { listStates, taskWorker } from './local-tasks.ts';
import { placeholderFor } from './worker-placeholders.ts';

/** The built-in worker's name, as `${Worker_report_progress}` names it. */
export const REPORT_PROGRESS_WORKER = 'report_progress';

/** Adds `executionName` (and `operation`) to the payload of every state that reports. */
export function injectReportContext(definition: unknown, options: { envelope: boolean }): { definition: unknown; reports: boolean; problems: string[] } {
  const reporting = listStates(definition).filter(({ state }) => state.Type === 'Task' && taskWorker(state) === REPORT_PROGRESS_WORKER);
  if (reporting.length === 0) return { definition, reports: false, problems: [] };
  const copy = structuredClone(definition) as Record<string, unknown>;
  const topLanguage = copy.QueryLanguage === 'JSONata' ? 'JSONata' : 'JSONPath';
  const problems: string[] = [];
  for (const { name, state } of listStates(copy)) {
    if (state.Type !== 'Task' || taskWorker(state) !== REPORT_PROGRESS_WORKER) continue;
    if (typeof state.Resource === 'string' && state.Resource.endsWith('.waitForTaskToken')) {
      problems.push(
        `state "${name}" calls ${placeholderFor(REPORT_PROGRESS_WORKER)} with .waitForTaskToken, but the worker answers at once: use it as the Resource, or arn:aws:states:::lambda:invoke`,
      );
      continue;
    }
    const jsonata = (state.QueryLanguage ?? topLanguage) === 'JSONata';
    const field = jsonata ? 'Arguments' : 'Parameters';
    const holder = state[field];
    // A direct call takes Parameters/Arguments as its payload; lambda:invoke takes their Payload.
    const direct = state.Resource === placeholderFor(REPORT_PROGRESS_WORKER);
    const payload = direct ? holder : isObject(holder) ? holder.Payload : undefined;
    if (!isObject(payload)) {
      problems.push(
        `state "${name}": ${direct ? field : `${field}.Payload`} must be an object, { progress, total?, message? } or { level, logger?, data }, so the operation's fields can be added to it`,
      );
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
  return { definition: copy, reports: true, problems };
}
