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
 * machine gets our envelope. It also adds `asking`: when the state was entered, its
 * TimeoutSeconds and HeartbeatSeconds, and whether anything else of the execution can run
 * beside it, because Step Functions reports no event when such a state times out, so the
 * question's deadline must be known when it is asked. Both runtimes deploy or run the definition with these fields.
 * Each such state also retries `Mcp.AskFailed` (the question or its event not recorded) with
 * backoff, unless its own Retry names it: asking again is idempotent, so the run keeps
 * waiting for its answer where it would otherwise fail.
 * A state that could never be answered is reported here, at load time, rather than
 * failing (or waiting forever) at run time.
 */
import { INPUT_ERRORS } from '../operations/input-requests.ts';
import { isObject } from '../shared/json-values.ts';
import { taskWorker } from './local-tasks.ts';
import { placeholderFor } from './worker-placeholders.ts';

/** The built-in worker's name, as `${Worker_request_input}` names it. */
export const REQUEST_INPUT_WORKER = 'request_input';
const WAIT_FOR_TASK_TOKEN = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
/** The server-to-client requests MCP defines; the worker refuses any other at run time. */
const REQUEST_METHODS = ['elicitation/create', 'sampling/createMessage', 'roots/list'];
/** Payload fields the loader writes. */
const ADDED_FIELDS = ['executionName', 'operation', 'asking'];
/**
 * The retrier every asking state gets: a throttled event log or queue is usually through within
 * seconds, and a state that gives up fails its run, so it backs off to half a minute, about
 * four minutes in all.
 */
export const ASK_FAILED_RETRY = {
  ErrorEquals: [INPUT_ERRORS.askFailed],
  IntervalSeconds: 1,
  BackoffRate: 2,
  MaxDelaySeconds: 30,
  MaxAttempts: 10,
  JitterStrategy: 'FULL',
} as const;
/** A JSONata expression: the whole string is `{% ... %}`. */
const JSONATA_EXPRESSION = /^\{%[\s\S]*%\}$/;

export interface InjectOptions {
  /** Whether the execution input is our envelope (`{ arguments, operation }`), so the payload can carry `operation`. */
  envelope: boolean;
  /** The tool's workflow type: Express workflows cannot wait for a task token. */
  workflowType?: 'STANDARD' | 'EXPRESS';
}

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
 * of every state that calls the request-input worker, in the state's query language, and
 * reports each such state that could not be answered.
 */
export function injectRequestInputContext(definition: unknown, options: InjectOptions): InjectedDefinition {
  if (askingStates(definition).length === 0) return { definition, asks: false, problems: [] };
  const copy = structuredClone(definition) as Record<string, unknown>;
  const problems: string[] = [];
  if (options.workflowType === 'EXPRESS') {
    problems.push(
      `EXPRESS workflows cannot wait for a task token, so they cannot ask the client a question: make the tool STANDARD (workflowType in tool.json)`,
    );
  }
  const topLanguage = copy.QueryLanguage === 'JSONata' ? 'JSONata' : 'JSONPath';
  for (const asking of askingStates(copy)) {
    const problem = injectInto(asking, topLanguage, options.envelope);
    if (problem) problems.push(problem);
  }
  return { definition: copy, asks: true, problems };
}

interface AskingState {
  name: string;
  state: Record<string, unknown>;
  /** The distributed Map this state runs under, if any. */
  distributedMap?: string;
  /** Whether it runs inside a Parallel branch or a Map, where other states of the execution run beside it. */
  concurrent: boolean;
}

/** Adds the fields to one state's payload, or says why it cannot work. */
function injectInto({ name, state, distributedMap, concurrent }: AskingState, topLanguage: string, envelope: boolean): string | undefined {
  const placeholder = placeholderFor(REQUEST_INPUT_WORKER);
  if (taskWorker(state) !== REQUEST_INPUT_WORKER) {
    return `state "${name}" names ${placeholder} where neither runtime calls it: use "Resource": "${WAIT_FOR_TASK_TOKEN}" with "FunctionName": "${placeholder}" in Parameters (JSONPath) or Arguments (JSONata)`;
  }
  if (state.Resource !== WAIT_FOR_TASK_TOKEN) {
    return `state "${name}" calls ${placeholder}, which answers only through a task token: use "Resource": "${WAIT_FOR_TASK_TOKEN}"`;
  }
  // A child execution has its own name and input, so the worker could not find the operation.
  if (distributedMap !== undefined) {
    return `state "${name}" is inside the distributed Map "${distributedMap}", whose child executions are not the operation's: ask before or after the Map, or make it an inline Map`;
  }
  const jsonata = (state.QueryLanguage ?? topLanguage) === 'JSONata';
  const holder = jsonata ? state.Arguments : state.Parameters;
  const payload = isObject(holder) ? holder.Payload : undefined;
  if (!isObject(payload)) {
    return `state "${name}": ${jsonata ? 'Arguments' : 'Parameters'}.Payload must be an object with taskToken and request, so the operation's fields can be added to it`;
  }
  const field = (key: string): unknown => (jsonata ? payload[key] : (payload[`${key}.$`] ?? payload[key]));

  // A literal token (JSONPath syntax in JSONata, or a JSONPath field without `.$`) would be stored as is, and no answer could resume the state.
  const token = jsonata ? payload.taskToken : payload['taskToken.$'];
  if (typeof token !== 'string' || (jsonata && !JSONATA_EXPRESSION.test(token.trim()))) {
    return `state "${name}": the Payload needs the task token, ${jsonata ? '"taskToken": "{% $states.context.Task.Token %}"' : '"taskToken.$": "$$.Task.Token"'}`;
  }
  if (field('request') === undefined) {
    return `state "${name}": the Payload needs the question, "request": { "method": "elicitation/create", "params": { ... } } (or sampling/createMessage, roots/list)`;
  }
  const method = literalMethod(payload.request, jsonata);
  if (method !== undefined && !REQUEST_METHODS.includes(method)) {
    return `state "${name}": request.method "${method}" is not a request a server may send the client: use elicitation/create, sampling/createMessage or roots/list`;
  }
  const taken = ADDED_FIELDS.filter((key) => payload[key] !== undefined || payload[`${key}.$`] !== undefined);
  if (taken.length > 0) {
    return `state "${name}": the Payload sets ${taken.join(' and ')}, which the loader adds; remove ${taken.length === 1 ? 'it' : 'them'}`;
  }

  if (jsonata) {
    payload.executionName = '{% $states.context.Execution.Name %}';
    if (envelope) payload.operation = '{% $states.context.Execution.Input.operation %}';
  } else {
    payload['executionName.$'] = '$$.Execution.Name';
    if (envelope) payload['operation.$'] = '$$.Execution.Input.operation';
  }
  payload.asking = askingFields(state, jsonata, concurrent);
  const retriers = Array.isArray(state.Retry) ? state.Retry : [];
  const retried = retriers.some((retrier) => isObject(retrier) && Array.isArray(retrier.ErrorEquals) && retrier.ErrorEquals.includes(INPUT_ERRORS.askFailed));
  // First, so a States.ALL retrier (which must come last) stays last.
  if (!retried) state.Retry = [structuredClone(ASK_FAILED_RETRY), ...retriers];
  return undefined;
}

/**
 * What the worker needs to date the question: the state's entry time and its timeouts,
 * written as the state writes them (a number, a JSONPath `...Path`, or a JSONata
 * expression, which Parameters and Arguments evaluate over the same input).
 */
function askingFields(state: Record<string, unknown>, jsonata: boolean, concurrent: boolean): Record<string, unknown> {
  // A retry runs the state again under its first EnteredTime, so the worker dates a retried attempt by its own clock.
  const fields: Record<string, unknown> = jsonata
    ? {
        enteredTime: '{% $states.context.State.EnteredTime %}',
        retryCount: '{% $states.context.State.RetryCount %}',
        stateName: '{% $states.context.State.Name %}',
      }
    : { 'enteredTime.$': '$$.State.EnteredTime', 'retryCount.$': '$$.State.RetryCount', 'stateName.$': '$$.State.Name' };
  for (const [field, name] of [
    ['TimeoutSeconds', 'timeoutSeconds'],
    ['HeartbeatSeconds', 'heartbeatSeconds'],
  ] as const) {
    const path = state[`${field}Path`];
    if (state[field] !== undefined) fields[name] = state[field];
    else if (!jsonata && typeof path === 'string') fields[`${name}.$`] = path;
  }
  fields.concurrent = concurrent;
  return fields;
}

/** The request's method when the definition writes it as a literal; undefined when it is computed. */
function literalMethod(request: unknown, jsonata: boolean): string | undefined {
  if (!isObject(request) || typeof request.method !== 'string') return undefined;
  return jsonata && JSONATA_EXPRESSION.test(request.method.trim()) ? undefined : request.method;
}

/**
 * Every Task state that calls or names the worker, including those in Parallel branches and
 * Map processors, with the distributed Map each runs under.
 */
function askingStates(definition: unknown): AskingState[] {
  const placeholder = placeholderFor(REQUEST_INPUT_WORKER);
  const found: AskingState[] = [];
  const walk = (machine: unknown, distributedMap: string | undefined, concurrent: boolean) => {
    const states = isObject(machine) ? machine.States : undefined;
    if (!isObject(states)) return;
    for (const [name, state] of Object.entries(states)) {
      if (!isObject(state)) continue;
      if (state.Type === 'Task' && (taskWorker(state) === REQUEST_INPUT_WORKER || JSON.stringify(state).includes(placeholder))) {
        found.push({ name, state, concurrent, ...(distributedMap === undefined ? {} : { distributedMap }) });
      }
      for (const branch of Array.isArray(state.Branches) ? state.Branches : []) walk(branch, distributedMap, true);
      const processor = state.ItemProcessor ?? state.Iterator;
      const mode = isObject(processor) && isObject(processor.ProcessorConfig) ? processor.ProcessorConfig.Mode : undefined;
      walk(processor, mode === 'DISTRIBUTED' ? name : distributedMap, true);
    }
  };
  walk(definition, undefined, false);
  return found;
}
