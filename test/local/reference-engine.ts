/**
 * aws-local-stepfunctions, the reference the local interpreter (asl-interpreter.ts) is compared
 * against in one-definition-two-engines.test.ts. It is a maintained implementation of JSONPath
 * ASL, and runs nowhere outside test/. It binds Tasks as the local runtime does (bindTasks), so
 * both engines call the same workers and mocks.
 *
 * It cannot run a definition that uses JSONata or workflow variables, reads `$$.State`, or has
 * a falsy Pass Result (it drops such a Result and passes the input on, where the ASL spec
 * treats the value as the output of a virtual task); it refuses those.
 */
import './promise-with-resolvers.ts';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, StateMachine } from 'aws-local-stepfunctions';
import type { RunOptions, StateMachineDefinition } from 'aws-local-stepfunctions';
import { walkDefinition } from '../../local/stepfunctions/asl-definition.ts';
import { runTask } from '../../local/stepfunctions/asl-tasks.ts';
import type { InterpreterEvent, LocalInterpreter, RunOutcome } from '../../local/stepfunctions/local-interpreter.ts';
import { bindTasks, mocksForRun, type LocalInterpreterOptions } from '../../local/stepfunctions/sfn-facade-interpreter.ts';

type JsonValue = Parameters<StateMachine['run']>[0];
type Overrides = NonNullable<RunOptions['overrides']>;

/**
 * ASL leaves Task states without a timeout, but aws-local-stepfunctions defaults to 60 s; this
 * is the longest a Node timer can wait (about 24.8 days), standing in for "no timeout".
 */
const NO_TIMEOUT_SECONDS = 2_147_483;

/** The library's events that the local interpreter logs too (it has no execution or Parallel branch events). */
const SHARED_EVENTS = new Set<string>([
  'StateEntered',
  'StateExited',
  'StateFailed',
  'StateRetried',
  'StateCaught',
  'MapIterationStarted',
  'MapIterationSucceeded',
  'MapIterationFailed',
]);

/** Validates `definitionText` as the library does and binds it; throws naming the machine and the first problem. */
export function createReferenceInterpreter(machineName: string, definitionText: string, options: LocalInterpreterOptions): LocalInterpreter {
  if (options.waitTimeScale !== 1) throw new Error('the reference engine runs Wait states in real time only (waitTimeScale 1)');
  try {
    const definition = JSON.parse(definitionText) as StateMachineDefinition;
    if (needsJsonataOrVariables(definition) || readsStateContext(definition) || hasFalsyPassResult(definition)) {
      throw new Error('aws-local-stepfunctions cannot run JSONata, workflow variables, $$.State or a falsy Pass Result as Step Functions does');
    }
    // Default validation: its ARN check accepts `${...}` substitutions, which `checkArn: false` rejects.
    new StateMachine(definition);
    // What runs is a copy with local defaults, validated as written above.
    const local = structuredClone(definition);
    const tasks = bindTasks(local, options);
    walkDefinition(local, (_name, state) => {
      if (state.Type === 'Task' && state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = NO_TIMEOUT_SECONDS;
    });
    const machine = new StateMachine(local, { validationOptions: { noValidate: true } });
    return {
      run(input, context, onEvent) {
        let pendingToken: string | undefined;
        // `$$.Task.Token` is read while the library builds a Task's Parameters, synchronously
        // before it calls that Task's handler, which takes the token over.
        const task = {
          get Token() {
            pendingToken ??= options.tokens.mint(context.executionArn);
            return pendingToken;
          },
        };
        const takeToken = () => {
          const token = pendingToken ?? options.tokens.mint(context.executionArn);
          pendingToken = undefined;
          return token;
        };
        const mocks = mocksForRun(tasks, options.taskMocks);
        const handlers: NonNullable<Overrides['taskResourceLocalHandlers']> = {};
        for (const [stateName, bound] of tasks) {
          // The library enforces TimeoutSeconds itself, except on the token wait.
          handlers[stateName] = async (stateInput) =>
            (await runTask(
              bound.kind,
              { input: stateInput, takeToken, heartbeatSeconds: bound.heartbeatSeconds, timeoutSeconds: bound.timeoutSeconds, enforceTimeout: false },
              options.tokens,
              mocks.get(stateName),
            )) as JsonValue;
        }
        const execution = machine.run(input as JsonValue, {
          overrides: { taskResourceLocalHandlers: handlers },
          context: {
            Execution: { Id: context.executionArn, Input: input as JsonValue, Name: context.executionName, RedriveCount: 0 },
            StateMachine: { Id: context.stateMachineArn, Name: context.stateMachineName },
            Task: task,
          },
        });
        return {
          abort: () => execution.abort(),
          outcome: execution.result.then((output): RunOutcome => ({ status: 'SUCCEEDED', output }), toOutcome),
          // The library offers its log only as an async iterable.
          logged: (async () => {
            for await (const event of execution.eventLogs) if (SHARED_EVENTS.has(event.type)) onEvent(event as InterpreterEvent);
          })(),
        };
      },
    };
  } catch (error) {
    throw new Error(`state machine ${machineName}: ${(error as Error).message}`);
  }
}

function toOutcome(error: unknown): RunOutcome {
  if (error instanceof ExecutionAbortedError) return { status: 'ABORTED' };
  if (error instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT' };
  const failure = error instanceof ExecutionError && error.cause instanceof Error ? error.cause : error;
  if (!(failure instanceof Error)) return { status: 'FAILED', error: 'States.Runtime', cause: String(failure) };
  // A Fail state without Error or Cause: the library fills in placeholders that AWS would leave out.
  const fromFailState = failure.constructor.name === 'FailStateError';
  const name = fromFailState && failure.name === 'FailStateError' ? '' : failure.name;
  const cause = fromFailState && failure.message === 'Execution failed because of a Fail state' ? '' : failure.message;
  return { status: 'FAILED', ...(name ? { error: name } : {}), ...(cause ? { cause } : {}) };
}

type State = Record<string, unknown>;

/** JSONata or variables anywhere: the library's validator predates QueryLanguage, even "JSONPath". */
function needsJsonataOrVariables(definition: unknown): boolean {
  if ((definition as State).QueryLanguage !== undefined) return true;
  let needed = false;
  walkDefinition(definition, (_name, state) => {
    const nested = [state.Choices, state.Catch].flatMap((list) => (Array.isArray(list) ? (list as State[]).map((entry) => entry.Assign) : []));
    if (state.QueryLanguage !== undefined || [state.Assign, ...nested].some((assign) => assign !== undefined)) needed = true;
  });
  return needed;
}

/** `$$.State` (or the whole `$$`), whose Name, EnteredTime and RetryCount the library cannot give. */
function readsStateContext(definition: unknown): boolean {
  // `\b` keeps `$$.StateMachine` out.
  return /\$\$(?:\.State\b|(?![.\w]))/.test(JSON.stringify(definition));
}

/** A Pass state whose Result is `0`, `""`, `false` or `null`, which the library drops. */
function hasFalsyPassResult(definition: unknown): boolean {
  let found = false;
  walkDefinition(definition, (_name, state) => {
    if (state.Type === 'Pass' && 'Result' in state && !state.Result) found = true;
  });
  return found;
}
