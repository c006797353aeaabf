/**
 * Parallel and inline Map states for the JSONata-capable interpreter. Each branch and each
 * iteration runs in a variable scope of its own that reads the outer ones; what it assigns
 * stays inside, so data leaves only through its output. The first branch or iteration that
 * fails fails the state, and the others are stopped.
 */
import type { StateGraph } from './asl-definition.ts';
import { evaluateJsonataTemplate } from './asl-jsonata.ts';
import { applyTemplate, readPath } from './asl-jsonpath.ts';
import { failureOf, RunStop, type EventSink, type StopSignal } from './asl-run-support.ts';
import {
  effectiveInput,
  finishState,
  jsonataBindings,
  numberField,
  pathSources,
  workArguments,
  type StateFrame,
  type StateResult,
  type VariableScope,
} from './asl-state-io.ts';
import type { InterpreterEvent } from './local-interpreter.ts';
import { TaskError } from './sfn-facade-errors.ts';

/**
 * What a Parallel or Map state needs from the execution it runs in (asl-interpreter.ts
 * passes itself): running a branch or an iteration, and the run's event log.
 */
export interface BranchHost {
  runGraph(graph: StateGraph, input: unknown, scope: VariableScope, signal: StopSignal): Promise<unknown>;
  readonly events: EventSink<InterpreterEvent>;
}

type Job<T> = (signal: StopSignal) => Promise<T>;

/** Runs every branch of a Parallel state on a copy of its input; the output lists their outputs in order. */
export async function runParallel(execution: BranchHost, frame: StateFrame, signal: StopSignal): Promise<StateResult> {
  const effective = effectiveInput(frame);
  const branchInput = await workArguments(frame, effective);
  const branches = (frame.state.Branches as StateGraph[] | undefined) ?? [];
  const jobs = branches.map(
    (branch): Job<unknown> =>
      (child) =>
        execution.runGraph(branch, structuredClone(branchInput), frame.scope.child(), child),
  );
  const result = await runAll(jobs, 0, signal);
  return finishState(frame, effective, { result, hasResult: true });
}

/** Runs a Map state's processor over each item, at most MaxConcurrency at a time; the output lists their outputs in order. */
export async function runMap(execution: BranchHost, frame: StateFrame, signal: StopSignal): Promise<StateResult> {
  const { state } = frame;
  const effective = effectiveInput(frame);
  const items = frame.jsonata
    ? state.Items === undefined
      ? frame.input
      : await evaluateJsonataTemplate(state.Items, jsonataBindings(frame), 'Items')
    : state.ItemsPath === undefined
      ? effective
      : readPath(String(state.ItemsPath), effective, pathSources(frame), 'ItemsPath');
  if (!Array.isArray(items)) {
    const error = frame.jsonata ? 'States.QueryEvaluationError' : 'States.Runtime';
    throw new TaskError(error, `The items of Map state "${frame.name}" must be a JSON array, not ${JSON.stringify(items)}`);
  }
  const maxConcurrency = (await numberField(frame, 'MaxConcurrency')) ?? 0;
  const processor = (state.ItemProcessor ?? state.Iterator) as StateGraph;
  const selector = state.ItemSelector ?? (frame.jsonata ? undefined : state.Parameters);
  const parentState = { name: frame.name, type: 'Map' as const, input: frame.input };
  const jobs = items.map(
    (item, index): Job<unknown> =>
      async (child) => {
        // `$$.Map.Item` exists only while the ItemSelector is evaluated.
        const context = { ...frame.context, Map: { Item: { Index: index, Value: item } } };
        let itemInput: unknown = item;
        if (selector !== undefined) {
          itemInput = frame.jsonata
            ? await evaluateJsonataTemplate(selector, jsonataBindings(frame, { context }), 'ItemSelector')
            : applyTemplate(selector, effective, pathSources(frame, { context }));
        }
        execution.events.push({ type: 'MapIterationStarted', timestamp: Date.now(), parentState, index });
        try {
          const output = await execution.runGraph(processor, itemInput, frame.scope.child(), child);
          execution.events.push({ type: 'MapIterationSucceeded', timestamp: Date.now(), parentState, index });
          return output;
        } catch (error) {
          if (!child.aborted) execution.events.push({ type: 'MapIterationFailed', timestamp: Date.now(), parentState, index, ...failureOf(error) });
          throw error;
        }
      },
  );
  const result = await runAll(jobs, maxConcurrency, signal);
  return finishState(frame, effective, { result, hasResult: true });
}

/** Runs `jobs` at most `limit` at a time (0: all at once); results keep the jobs' order. */
async function runAll<T>(jobs: Job<T>[], limit: number, parent: StopSignal): Promise<T[]> {
  const child = new RunStop();
  const stop = () => child.abort();
  parent.addEventListener('abort', stop, { once: true });
  const results: T[] = new Array<T>(jobs.length);
  const width = limit > 0 ? limit : Math.max(1, jobs.length);
  try {
    await new Promise<void>((resolve, reject) => {
      let started = 0;
      let finished = 0;
      let failed = false;
      if (jobs.length === 0) return resolve();
      const launch = () => {
        while (!failed && started - finished < width && started < jobs.length) {
          const index = started++;
          const job = jobs[index];
          if (!job) break;
          job(child).then(
            (value) => {
              results[index] = value;
              finished++;
              if (finished === jobs.length) resolve();
              else launch();
            },
            (error: unknown) => {
              if (failed) return;
              failed = true;
              child.abort();
              reject(error);
            },
          );
        }
      };
      launch();
    });
  } finally {
    parent.removeEventListener('abort', stop);
  }
  return results;
}
