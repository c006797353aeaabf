/**
 * What the local runtime can run. A Task state runs locally when it calls a worker
 * (`"${Worker_<name>}"`, or `lambda:invoke[.waitForTaskToken]` of one) or when
 * `mocks.json` mocks it; any other Task (an AWS service integration) would need AWS, so
 * the local server refuses to start and says what to add. An existing state machine
 * (`stateMachineArn`) runs locally from the `definition.asl.json` beside it, or from
 * `mocks.json` alone (one mocked state standing for the whole execution); without either
 * it is listed, and each call fails naming the ARN.
 */
import { isObject } from '../shared/json-values.ts';
import { DEFAULT_TEST_CASE, MOCKS_FILE, type ToolMocks } from './tool-mocks.ts';
import { findWorkerPlaceholders, workerSubstitutionKey } from './worker-placeholders.ts';

const LAMBDA_INVOKE = /^arn:aws:states:::lambda:invoke(\.waitForTaskToken)?$/;

/** The Error of an execution of an existing machine that has no local stand-in. */
export const NO_LOCAL_STAND_IN_ERROR = 'Local.NoStandIn';

/** Every state of a definition, including Parallel branches and Map processors. */
export function listStates(definition: unknown): { name: string; state: Record<string, unknown> }[] {
  const found: { name: string; state: Record<string, unknown> }[] = [];
  const walk = (machine: unknown) => {
    const states = isObject(machine) ? machine.States : undefined;
    if (!isObject(states)) return;
    for (const [name, state] of Object.entries(states)) {
      if (!isObject(state)) continue;
      found.push({ name, state });
      for (const branch of Array.isArray(state.Branches) ? state.Branches : []) walk(branch);
      walk(state.ItemProcessor ?? state.Iterator);
    }
  };
  walk(definition);
  return found;
}

/** The worker a Task state calls, when it calls one the way both runtimes understand. */
export function taskWorker(state: Record<string, unknown>): string | undefined {
  const resource = typeof state.Resource === 'string' ? state.Resource : '';
  const direct = placeholderWorker(resource);
  if (direct) return direct;
  if (!LAMBDA_INVOKE.test(resource)) return undefined;
  // JSONPath names the function in Parameters, JSONata in Arguments.
  for (const field of [state.Parameters, state.Arguments]) {
    const name = isObject(field) && typeof field.FunctionName === 'string' ? placeholderWorker(field.FunctionName) : undefined;
    if (name) return name;
  }
  return undefined;
}

/**
 * Why the local runtime cannot run `definition` with `mocks`: one message per Task that
 * is neither a worker call nor mocked, and per mocked state that is not a Task of it.
 */
export function localRunProblems(definition: unknown, mocks: ToolMocks | undefined, toolName: string): string[] {
  const problems: string[] = [];
  const states = listStates(definition);
  for (const { name, state } of states) {
    if (state.Type !== 'Task' || mocks?.states.has(name) || taskWorker(state)) continue;
    problems.push(
      `state "${name}" calls ${JSON.stringify(state.Resource)}, which cannot run locally: add ${MOCKS_FILE} with a mocked response for it ` +
        `(StateMachines.${toolName}.TestCases.${DEFAULT_TEST_CASE}.${name} naming one of MockedResponses), or call a worker`,
    );
  }
  for (const mocked of mocks?.states.keys() ?? []) {
    const state = states.find((entry) => entry.name === mocked)?.state;
    if (!state) problems.push(`${MOCKS_FILE} mocks state "${mocked}", which the definition does not have`);
    else if (state.Type !== 'Task') problems.push(`${MOCKS_FILE} mocks state "${mocked}", which is a ${String(state.Type)} state, not a Task`);
  }
  return problems;
}

/**
 * The definition an existing machine runs as locally when only `mocks.json` stands in for
 * it: its one mocked state, whose Return is the execution's output and whose Throw fails it.
 */
export function mockOnlyDefinition(mocks: ToolMocks): { definitionText?: string; problem?: string } {
  const states = [...mocks.states.keys()];
  const [state] = states;
  if (state === undefined || states.length !== 1) {
    return {
      problem:
        `without a definition.asl.json, ${MOCKS_FILE} stands in for the whole execution: its test case "${mocks.testCase}" ` +
        `must mock exactly one state (for example "Execution"), not ${states.length}`,
    };
  }
  const definition = {
    Comment: `Local stand-in: ${MOCKS_FILE} answers for the existing state machine.`,
    StartAt: state,
    States: { [state]: { Type: 'Task', Resource: 'arn:aws:states:::aws-sdk:sfn:startExecution', End: true } },
  };
  return { definitionText: JSON.stringify(definition) };
}

/** The definition an existing machine runs as locally when nothing stands in for it: every call fails, saying what to add. */
export function noStandInDefinition(toolName: string, stateMachineArn: string): string {
  const cause =
    `Tool "${toolName}" runs the existing state machine ${stateMachineArn}, which the local runtime cannot reach. ` +
    `To run it locally, put its definition.asl.json or a ${MOCKS_FILE} beside the tool's tool.json.`;
  return JSON.stringify({ StartAt: 'NoLocalStandIn', States: { NoLocalStandIn: { Type: 'Fail', Error: NO_LOCAL_STAND_IN_ERROR, Cause: cause } } });
}

/** The worker name when `value` is exactly one `${Worker_<name>}` placeholder. */
function placeholderWorker(value: string): string | undefined {
  const [worker, ...others] = findWorkerPlaceholders(value);
  return worker && others.length === 0 && value === `\${${workerSubstitutionKey(worker)}}` ? worker : undefined;
}
