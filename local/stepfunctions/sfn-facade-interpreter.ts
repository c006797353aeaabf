/**
 * Binds one state machine definition to the local runtime: every machine runs on
 * asl-interpreter.ts, which calls worker handlers in-process wherever the deployed machine
 * would invoke a worker Lambda, and mocks for other Task resources (see asl-tasks.ts).
 *
 * A definition's ASL is validated once, by asl-validator when its tool folder loads
 * (lambdas/tools/tool-folder.ts; the CDK app runs the same loader at synth, so an as-deployed
 * definition was checked there). Here it is only checked for what running it locally needs
 * (asl-definition.ts's checkDefinition) and its Tasks are bound.
 */
import { walkDefinition, type StateGraph } from './asl-definition.ts';
import { AslMachine } from './asl-interpreter.ts';
import { classifyTask, runTask, type TaskKind, type TaskMockHandler, type TaskMocks, type WorkerHandler } from './asl-tasks.ts';
import type { LocalInterpreter } from './local-interpreter.ts';
import { tracedWorker } from '../../lambdas/observability/traced-invocation.ts';
import type { TaskTokens } from './sfn-facade-task-tokens.ts';

export interface LocalInterpreterOptions {
  resolveWorker: (worker: string) => WorkerHandler;
  tokens: TaskTokens;
  /** Multiplies the duration of Wait states. */
  waitTimeScale: number;
  /** Answers Tasks whose resource is neither a worker nor a Lambda invoke; without one such a Task refuses to load. */
  taskMocks?: TaskMocks;
  /** The handler for a function a deployed definition names by ARN or name (see classifyTask). */
  resolveFunction?: (functionArnOrName: string) => WorkerHandler | undefined;
}

/** One Task state of a definition, classified once. */
export interface BoundTask {
  kind: TaskKind;
  heartbeatSeconds?: number;
  timeoutSeconds?: number;
}

/** Checks `definitionText` and binds its worker placeholders and mocks; throws naming the machine and the first problem. */
export function createLocalInterpreter(machineName: string, definitionText: string, options: LocalInterpreterOptions): LocalInterpreter {
  let definition: StateGraph;
  try {
    definition = JSON.parse(definitionText) as StateGraph;
  } catch (error) {
    throw new Error(`state machine ${machineName}: the definition is not valid JSON (${(error as Error).message})`);
  }
  try {
    const machine = new AslMachine(definition);
    const tasks = bindTasks(definition, options);
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
              {
                input: call.args,
                takeToken: call.takeToken,
                timeoutSeconds: call.timeoutSeconds,
                heartbeatSeconds: call.heartbeatSeconds,
                enforceTimeout: true,
              },
              options.tokens,
              mocks.get(call.stateName),
            );
          },
        });
      },
    };
  } catch (error) {
    throw new Error(`state machine ${machineName}: ${(error as Error).message}`);
  }
}

/** Classifies every Task of a definition once, resolving each worker once (the tests' reference engine binds with it too). */
export function bindTasks(
  definition: unknown,
  options: Pick<LocalInterpreterOptions, 'resolveWorker' | 'taskMocks' | 'resolveFunction'>,
): Map<string, BoundTask> {
  const workers = new Map<string, WorkerHandler>();
  const workerFor = (name: string) => {
    let handler = workers.get(name);
    if (!handler) {
      // Each invocation a span of the execution's trace, as a worker Lambda's would be.
      handler = tracedWorker(name, options.resolveWorker(name));
      workers.set(name, handler);
    }
    return handler;
  };
  const tasks = new Map<string, BoundTask>();
  const seen = new Set<string>();
  walkDefinition(definition, (stateName, state) => {
    // Overrides and mocks are keyed by state name, and ASL requires names unique across the whole machine.
    if (seen.has(stateName)) throw new Error(`state name "${stateName}" is used twice; state names must be unique across the machine`);
    seen.add(stateName);
    if (state.Type !== 'Task') return;
    tasks.set(stateName, {
      kind: classifyTask(stateName, state, workerFor, options.taskMocks, options.resolveFunction),
      heartbeatSeconds: typeof state.HeartbeatSeconds === 'number' ? state.HeartbeatSeconds : undefined,
      timeoutSeconds: typeof state.TimeoutSeconds === 'number' ? state.TimeoutSeconds : undefined,
    });
  });
  return tasks;
}

const NO_MOCKS: ReadonlyMap<string, TaskMockHandler | undefined> = new Map();

/** A run's mock handlers, fetched afresh so that each execution counts its own calls. */
export function mocksForRun(tasks: Map<string, BoundTask>, mocks: TaskMocks | undefined): ReadonlyMap<string, TaskMockHandler | undefined> {
  // Most machines mock nothing: a waiting run of one then keeps no map of its own.
  if (!mocks) return NO_MOCKS;
  const handlers = new Map<string, TaskMockHandler | undefined>();
  for (const [stateName, task] of tasks) if (task.kind.kind === 'mock') handlers.set(stateName, mocks.handlerFor(stateName));
  return handlers;
}
