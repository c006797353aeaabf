/**
 * Runs one state machine definition with `aws-local-stepfunctions`, calling worker
 * handlers in-process wherever the deployed machine would invoke a worker Lambda:
 * `"Resource": "${Worker_<name>}"`, and `arn:aws:states:::lambda:invoke[.waitForTaskToken]`
 * whose `Parameters.FunctionName` is such a placeholder. Worker failures are reported the
 * way Lambda reports them (see lambda-function-error.ts). Any other Task resource is
 * rejected up front (the interpreter would call real AWS), and so are the features the
 * interpreter would silently run differently (JSONata, variables).
 */
import './promise-with-resolvers.ts';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, StateMachine } from 'aws-local-stepfunctions';
import type { RunOptions, StateMachineDefinition } from 'aws-local-stepfunctions';
import { findWorkerPlaceholders, workerSubstitutionKey } from '../lambdas/tools/worker-placeholders.ts';
import { lambdaFunctionError } from './lambda-function-error.ts';
import type { TaskTokens } from './sfn-facade-task-tokens.ts';
import { WaitScaler } from './sfn-facade-wait-scaling.ts';

type WorkerHandler = (event: unknown) => Promise<unknown>;
type Run = ReturnType<StateMachine['run']>;
type JsonValue = Parameters<StateMachine['run']>[0];
type LocalHandler = (input: JsonValue) => Promise<JsonValue>;
type Overrides = NonNullable<RunOptions['overrides']>;

/** One event of the interpreter's log, before the facade maps it to a history event. */
export type InterpreterEvent = Run['eventLogs'] extends AsyncGenerator<infer E> ? E : never;

export type RunOutcome =
  | { status: 'SUCCEEDED'; output: unknown }
  | { status: 'FAILED'; error?: string; cause?: string }
  | { status: 'TIMED_OUT' }
  | { status: 'ABORTED' };

export interface RunContext {
  executionArn: string;
  executionName: string;
  stateMachineArn: string;
  stateMachineName: string;
}

export interface InterpreterRun {
  /** Stops the run: pending Wait states and retries end at once. */
  abort(): void;
  /** Never rejects. */
  outcome: Promise<RunOutcome>;
  events: AsyncIterable<InterpreterEvent>;
}

export interface LocalInterpreter {
  run(input: unknown, context: RunContext): InterpreterRun;
}

export interface LocalInterpreterOptions {
  resolveWorker: (worker: string) => WorkerHandler;
  tokens: TaskTokens;
  /** Multiplies the duration of Wait states. */
  waitTimeScale: number;
}

const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';
const LAMBDA_INVOKE_WAIT = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
/**
 * ASL leaves Task states without a timeout, but the interpreter defaults to 60 s; this is the
 * longest a Node timer can wait (about 24.8 days), standing in for "no timeout".
 */
const NO_TIMEOUT_SECONDS = 2_147_483;

type TaskKind =
  | { kind: 'direct'; worker: WorkerHandler }
  | { kind: 'invoke'; worker: WorkerHandler }
  | { kind: 'wait'; worker: WorkerHandler; heartbeatSeconds?: number; timeoutSeconds?: number };

/** Validates `definitionText` and binds its worker placeholders; throws naming the first problem. */
export function createLocalInterpreter(machineName: string, definitionText: string, options: LocalInterpreterOptions): LocalInterpreter {
  let definition: StateMachineDefinition;
  try {
    definition = JSON.parse(definitionText) as StateMachineDefinition;
  } catch (error) {
    throw new Error(`state machine ${machineName}: the definition is not valid JSON (${(error as Error).message})`);
  }
  const tasks = new Map<string, TaskKind>();
  const waits = new WaitScaler(options.waitTimeScale);
  let machine: StateMachine;
  try {
    // Default validation: the ARN check accepts `${...}` substitutions, which `checkArn: false` rejects.
    new StateMachine(definition);
    // What runs is a copy with local bindings and defaults, already validated as written.
    definition = structuredClone(definition);
    const workers = new Map<string, WorkerHandler>();
    const workerFor = (name: string) => {
      let handler = workers.get(name);
      if (!handler) workers.set(name, (handler = options.resolveWorker(name)));
      return handler;
    };
    refuseUnsupportedLanguage(definition, 'the definition');
    walkStates(definition, (stateName, state) => {
      refuseUnsupportedLanguage(state, `state "${stateName}"`);
      if (state.Type === 'Task') tasks.set(stateName, classifyTask(stateName, state, workerFor));
      if (state.Type === 'Wait') waits.add(stateName, state);
    });
    machine = new StateMachine(definition, { validationOptions: { noValidate: true } });
  } catch (error) {
    throw new Error(`state machine ${machineName}: ${(error as Error).message}`);
  }

  return {
    run(input, context) {
      let pendingToken: string | undefined;
      // `$$.Task.Token` is read while the interpreter builds a Task's Parameters, synchronously
      // before it calls that Task's handler, which takes the token over.
      const task = {
        get Token() {
          return (pendingToken ??= options.tokens.mint(context.executionArn));
        },
      };
      const takeToken = () => {
        const token = pendingToken ?? options.tokens.mint(context.executionArn);
        pendingToken = undefined;
        return token;
      };
      // Ends the scaled waits, which the interpreter's own abort does not reach.
      const stopped = new AbortController();
      const handlers = waits.handlers(stopped.signal) as Record<string, LocalHandler>;
      for (const [stateName, kind] of tasks) {
        handlers[stateName] = (stateInput) => runTask(kind, stateInput, takeToken, options.tokens);
      }
      const overrides: Overrides = { taskResourceLocalHandlers: handlers, waitTimeOverrides: waits.waitTimeOverrides };
      let execution: Run;
      try {
        execution = machine.run(input as JsonValue, {
          overrides,
          context: {
            Execution: { Id: context.executionArn, Name: context.executionName, RedriveCount: 0 },
            StateMachine: { Id: context.stateMachineArn, Name: context.stateMachineName },
            Task: task,
          },
        });
      } catch (error) {
        const outcome: RunOutcome = { status: 'FAILED', error: 'States.Runtime', cause: (error as Error).message };
        return { abort: () => undefined, outcome: Promise.resolve(outcome), events: emptyEvents() };
      }
      const outcome = execution.result.then((output): RunOutcome => ({ status: 'SUCCEEDED', output }), toOutcome);
      void outcome.finally(() => stopped.abort());
      return {
        abort: () => {
          stopped.abort();
          execution.abort();
        },
        outcome,
        events: waits.relabel(execution.eventLogs),
      };
    },
  };
}

async function runTask(kind: TaskKind, input: JsonValue, takeToken: () => string, tokens: TaskTokens): Promise<JsonValue> {
  if (kind.kind === 'direct') {
    takeToken();
    return invokeWorker(kind.worker, input);
  }
  const request = (input ?? {}) as { Payload?: unknown };
  const payload = request.Payload ?? {};
  if (kind.kind === 'invoke') {
    takeToken();
    const result = await invokeWorker(kind.worker, payload);
    return { ExecutedVersion: '$LATEST', Payload: result, StatusCode: 200 };
  }
  const token = takeToken();
  const answered = tokens.wait(token, { heartbeatSeconds: kind.heartbeatSeconds, timeoutSeconds: kind.timeoutSeconds });
  const invoked = invokeWorker(kind.worker, payload).then(
    () => answered,
    (error: unknown) => {
      tokens.cancel(token);
      throw error;
    },
  );
  // The answer may arrive while the worker is still running, as it can in AWS.
  return (await Promise.race([answered, invoked])) as JsonValue;
}

/** Calls a worker across a JSON boundary, as a Lambda invocation would. */
async function invokeWorker(worker: WorkerHandler, event: unknown): Promise<JsonValue> {
  try {
    const result = await worker(JSON.parse(JSON.stringify(event ?? null)));
    return JSON.parse(JSON.stringify(result ?? null)) as JsonValue;
  } catch (error) {
    throw lambdaFunctionError(error);
  }
}

function toOutcome(error: unknown): RunOutcome {
  if (error instanceof ExecutionAbortedError) return { status: 'ABORTED' };
  if (error instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT' };
  const failure = error instanceof ExecutionError && error.cause instanceof Error ? error.cause : error;
  if (!(failure instanceof Error)) return { status: 'FAILED', error: 'States.Runtime', cause: String(failure) };
  // A Fail state without Error or Cause: the interpreter fills in placeholders that AWS would leave out.
  const fromFailState = failure.constructor.name === 'FailStateError';
  const name = fromFailState && failure.name === 'FailStateError' ? '' : failure.name;
  const cause = fromFailState && failure.message === 'Execution failed because of a Fail state' ? '' : failure.message;
  return { status: 'FAILED', ...(name ? { error: name } : {}), ...(cause ? { cause } : {}) };
}

function classifyTask(
  stateName: string,
  state: Record<string, unknown>,
  workerFor: (name: string) => WorkerHandler,
): TaskKind {
  const resource = String(state.Resource);
  if (state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = NO_TIMEOUT_SECONDS;
  const direct = placeholderWorker(resource);
  if (direct) return { kind: 'direct', worker: workerFor(direct) };
  if (resource === LAMBDA_INVOKE || resource === LAMBDA_INVOKE_WAIT) {
    const parameters = state.Parameters as Record<string, unknown> | undefined;
    const worker = typeof parameters?.FunctionName === 'string' ? placeholderWorker(parameters.FunctionName) : undefined;
    if (!worker) {
      throw new Error(`state "${stateName}" must name its function as Parameters.FunctionName "\${Worker_<name>}" to run locally`);
    }
    if (resource === LAMBDA_INVOKE) return { kind: 'invoke', worker: workerFor(worker) };
    return {
      kind: 'wait',
      worker: workerFor(worker),
      heartbeatSeconds: typeof state.HeartbeatSeconds === 'number' ? state.HeartbeatSeconds : undefined,
      timeoutSeconds: state.TimeoutSeconds === NO_TIMEOUT_SECONDS ? undefined : (state.TimeoutSeconds as number | undefined),
    };
  }
  throw new Error(
    `state "${stateName}" uses Resource "${resource}", which the local runtime cannot run; ` +
      `use "\${Worker_<name>}" or ${LAMBDA_INVOKE}[.waitForTaskToken] with such a FunctionName`,
  );
}

/**
 * aws-local-stepfunctions reads neither JSONata nor variables: it would run such a
 * definition without error and with other results than AWS, so it is refused instead.
 */
function refuseUnsupportedLanguage(node: object, where: string): void {
  const { QueryLanguage, Assign, Catch, Choices } = node as Record<string, unknown>;
  if (QueryLanguage === 'JSONata') throw new Error(`${where} uses QueryLanguage "JSONata", which the local runtime does not run yet`);
  const assigns = [Assign, ...[Catch, Choices].flatMap((list) => (Array.isArray(list) ? list.map((entry) => (entry as { Assign?: unknown }).Assign) : []))];
  if (assigns.some((assign) => assign !== undefined)) {
    throw new Error(`${where} uses Assign (workflow variables), which the local runtime does not run yet`);
  }
}

/** The worker name when `value` is exactly one `${Worker_<name>}` placeholder. */
function placeholderWorker(value: string): string | undefined {
  const [worker, ...others] = findWorkerPlaceholders(value);
  return worker && others.length === 0 && value === `\${${workerSubstitutionKey(worker)}}` ? worker : undefined;
}

/** Visits every state, including those inside Parallel branches and Map processors. */
function walkStates(definition: unknown, visit: (name: string, state: Record<string, unknown>) => void): void {
  const seen = new Set<string>();
  const walk = (machine: unknown) => {
    const states = (machine as { States?: Record<string, Record<string, unknown>> } | undefined)?.States;
    if (!states || typeof states !== 'object') return;
    for (const [name, state] of Object.entries(states)) {
      // Overrides are keyed by state name, and ASL requires names unique across the whole machine.
      if (seen.has(name)) throw new Error(`state name "${name}" is used twice; state names must be unique across the machine`);
      seen.add(name);
      visit(name, state);
      for (const branch of (state.Branches as unknown[] | undefined) ?? []) walk(branch);
      walk(state.ItemProcessor ?? state.Iterator);
    }
  };
  walk(definition);
}

async function* emptyEvents(): AsyncGenerator<InterpreterEvent> {}
