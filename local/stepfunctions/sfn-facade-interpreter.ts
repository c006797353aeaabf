/**
 * Runs one state machine definition locally, calling worker handlers in-process wherever the
 * deployed machine would invoke a worker Lambda, and mocks for other Task resources (see
 * asl-tasks.ts). JSONPath definitions run on `aws-local-stepfunctions`; a definition that uses
 * JSONata or workflow variables anywhere, reads `$$.State` or has a falsy Pass Result, which
 * that interpreter would silently run differently, runs on asl-interpreter.ts instead.
 */
import './promise-with-resolvers.ts';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, StateMachine } from 'aws-local-stepfunctions';
import type { RunOptions, StateMachineDefinition } from 'aws-local-stepfunctions';
import { hasFalsyPassResult, needsJsonataOrVariables, readsStateContext, walkDefinition, type StateGraph } from './asl-definition.ts';
import { AslMachine } from './asl-interpreter.ts';
import { classifyTask, runTask, type TaskKind, type TaskMockHandler, type TaskMocks, type WorkerHandler } from './asl-tasks.ts';
import type { LocalInterpreter, RunOutcome } from './local-interpreter.ts';
import type { TaskTokens } from './sfn-facade-task-tokens.ts';
import { WaitScaler } from './sfn-facade-wait-scaling.ts';

type Run = ReturnType<StateMachine['run']>;
type JsonValue = Parameters<StateMachine['run']>[0];
type LocalHandler = (input: JsonValue) => Promise<JsonValue>;
type Overrides = NonNullable<RunOptions['overrides']>;

export interface LocalInterpreterOptions {
  resolveWorker: (worker: string) => WorkerHandler;
  tokens: TaskTokens;
  /** Multiplies the duration of Wait states. */
  waitTimeScale: number;
  /** Answers Tasks whose resource is neither a worker nor a Lambda invoke; without one such a Task refuses to load. */
  taskMocks?: TaskMocks;
  /** The handler for a function a deployed definition names by ARN or name (see classifyTask). */
  resolveFunction?: (functionArnOrName: string) => WorkerHandler | undefined;
  /**
   * Which engine runs the machine: by default the one its definition needs (see the top of
   * this file). Named only to run one JSONPath definition through both and compare.
   */
  engine?: LocalEngine;
}

/** The two engines: asl-interpreter.ts, or aws-local-stepfunctions (JSONPath only). */
export type LocalEngine = 'asl-interpreter' | 'aws-local-stepfunctions';

/**
 * ASL leaves Task states without a timeout, but aws-local-stepfunctions defaults to 60 s; this
 * is the longest a Node timer can wait (about 24.8 days), standing in for "no timeout".
 */
const NO_TIMEOUT_SECONDS = 2_147_483;

interface BoundTask {
  kind: TaskKind;
  heartbeatSeconds?: number;
  timeoutSeconds?: number;
}

/** Validates `definitionText` and binds its worker placeholders and mocks; throws naming the first problem. */
export function createLocalInterpreter(machineName: string, definitionText: string, options: LocalInterpreterOptions): LocalInterpreter {
  let definition: StateMachineDefinition;
  try {
    definition = JSON.parse(definitionText) as StateMachineDefinition;
  } catch (error) {
    throw new Error(`state machine ${machineName}: the definition is not valid JSON (${(error as Error).message})`);
  }
  try {
    const bind = taskBinder(options);
    const jsonPath = !needsJsonataOrVariables(definition);
    // aws-local-stepfunctions checks a JSONPath definition as CreateStateMachine does, whichever
    // engine runs it. Default validation: its ARN check accepts `${...}` substitutions, which `checkArn: false` rejects.
    if (jsonPath) new StateMachine(definition);
    const needed = !jsonPath || readsStateContext(definition) || hasFalsyPassResult(definition);
    if (needed && options.engine === 'aws-local-stepfunctions') {
      throw new Error('aws-local-stepfunctions cannot run JSONata, workflow variables, $$.State or a falsy Pass Result as Step Functions does');
    }
    if (needed || options.engine === 'asl-interpreter') return createJsonataInterpreter(definition, bind, options);
    return createJsonPathInterpreter(definition, bind, options);
  } catch (error) {
    throw new Error(`state machine ${machineName}: ${(error as Error).message}`);
  }
}

type Binder = (definition: unknown, visitWait?: (name: string, state: Record<string, unknown>) => void) => Map<string, BoundTask>;

/** Classifies every Task of a definition once, resolving each worker once. */
function taskBinder(options: LocalInterpreterOptions): Binder {
  const workers = new Map<string, WorkerHandler>();
  const workerFor = (name: string) => {
    let handler = workers.get(name);
    if (!handler) {
      handler = options.resolveWorker(name);
      workers.set(name, handler);
    }
    return handler;
  };
  return (definition, visitWait) => {
    const tasks = new Map<string, BoundTask>();
    const seen = new Set<string>();
    walkDefinition(definition, (stateName, state) => {
      // Overrides and mocks are keyed by state name, and ASL requires names unique across the whole machine.
      if (seen.has(stateName)) throw new Error(`state name "${stateName}" is used twice; state names must be unique across the machine`);
      seen.add(stateName);
      // A scaled Wait is rewritten into a Task of the scaler's own; it is not one of the definition's Tasks.
      if (state.Type === 'Wait') return visitWait?.(stateName, state);
      if (state.Type !== 'Task') return;
      tasks.set(stateName, {
        kind: classifyTask(stateName, state, workerFor, options.taskMocks, options.resolveFunction),
        heartbeatSeconds: typeof state.HeartbeatSeconds === 'number' ? state.HeartbeatSeconds : undefined,
        timeoutSeconds: typeof state.TimeoutSeconds === 'number' ? state.TimeoutSeconds : undefined,
      });
    });
    return tasks;
  };
}

const NO_MOCKS: ReadonlyMap<string, TaskMockHandler | undefined> = new Map();

/** A run's mock handlers, fetched afresh so that each execution counts its own calls. */
function mocksForRun(tasks: Map<string, BoundTask>, mocks: TaskMocks | undefined): ReadonlyMap<string, TaskMockHandler | undefined> {
  // Most machines mock nothing: a waiting run of one then keeps no map of its own.
  if (!mocks) return NO_MOCKS;
  const handlers = new Map<string, TaskMockHandler | undefined>();
  for (const [stateName, task] of tasks) if (task.kind.kind === 'mock') handlers.set(stateName, mocks.handlerFor(stateName));
  return handlers;
}

/** JSONata, variables, `$$.State` or a falsy Pass Result anywhere (or asked for): the whole machine runs on asl-interpreter.ts. */
function createJsonataInterpreter(definition: unknown, bind: Binder, options: LocalInterpreterOptions): LocalInterpreter {
  const machine = new AslMachine(definition as StateGraph);
  const tasks = bind(definition);
  return {
    run(input, context, onEvent) {
      const mocks = mocksForRun(tasks, options.taskMocks);
      return machine.run(input, {
        context,
        onEvent,
        waitTimeScale: options.waitTimeScale,
        mintToken: () => options.tokens.mint(context.executionArn),
        runTask: (call) => {
          const task = tasks.get(call.stateName);
          if (!task) throw new Error(`No task is bound to the state ${call.stateName}`);
          return runTask(
            task.kind,
            { input: call.args, takeToken: call.takeToken, timeoutSeconds: call.timeoutSeconds, heartbeatSeconds: call.heartbeatSeconds, enforceTimeout: true },
            options.tokens,
            mocks.get(call.stateName),
          );
        },
      });
    },
  };
}

function createJsonPathInterpreter(definition: StateMachineDefinition, bind: Binder, options: LocalInterpreterOptions): LocalInterpreter {
  // What runs is a copy with local bindings and defaults, validated as written by createLocalInterpreter.
  const local = structuredClone(definition);
  const waits = new WaitScaler(options.waitTimeScale);
  const tasks = bind(local, (name, state) => waits.add(name, state));
  walkDefinition(local, (_name, state) => {
    if (state.Type === 'Task' && state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = NO_TIMEOUT_SECONDS;
  });
  const machine = new StateMachine(local, { validationOptions: { noValidate: true } });

  return {
    run(input, context, onEvent) {
      let pendingToken: string | undefined;
      // `$$.Task.Token` is read while the interpreter builds a Task's Parameters, synchronously
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
      // Ends the scaled waits, which the interpreter's own abort does not reach.
      const stopped = new AbortController();
      const handlers = waits.handlers(stopped.signal) as Record<string, LocalHandler>;
      const mocks = mocksForRun(tasks, options.taskMocks);
      for (const [stateName, bound] of tasks) {
        // aws-local-stepfunctions enforces TimeoutSeconds itself, except on the token wait.
        handlers[stateName] = async (stateInput) =>
          (await runTask(
            bound.kind,
            { input: stateInput, takeToken, heartbeatSeconds: bound.heartbeatSeconds, timeoutSeconds: bound.timeoutSeconds, enforceTimeout: false },
            options.tokens,
            mocks.get(stateName),
          )) as JsonValue;
      }
      const overrides: Overrides = { taskResourceLocalHandlers: handlers, waitTimeOverrides: waits.waitTimeOverrides };
      let execution: Run;
      try {
        execution = machine.run(input as JsonValue, {
          overrides,
          context: {
            Execution: { Id: context.executionArn, Input: input as JsonValue, Name: context.executionName, RedriveCount: 0 },
            StateMachine: { Id: context.stateMachineArn, Name: context.stateMachineName },
            // No `$$.State`: aws-local-stepfunctions cannot say which state or attempt runs, so a
            // definition that reads it runs on asl-interpreter.ts (see readsStateContext).
            Task: task,
          },
        });
      } catch (error) {
        const outcome: RunOutcome = { status: 'FAILED', error: 'States.Runtime', cause: (error as Error).message };
        return { abort: () => undefined, outcome: Promise.resolve(outcome), logged: Promise.resolve() };
      }
      const outcome = execution.result.then((output): RunOutcome => ({ status: 'SUCCEEDED', output }), toOutcome);
      void outcome.finally(() => stopped.abort());
      return {
        abort: () => {
          stopped.abort();
          execution.abort();
        },
        outcome,
        // aws-local-stepfunctions offers its log only as an async iterable.
        logged: (async () => {
          for await (const event of waits.relabel(execution.eventLogs)) onEvent(event);
        })(),
      };
    },
  };
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
