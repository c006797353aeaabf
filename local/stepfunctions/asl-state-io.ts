/**
 * A state's input and output processing in either query language, and its workflow
 * variables. JSONPath: InputPath → Parameters → (work) → ResultSelector → Assign →
 * ResultPath → OutputPath. JSONata: Arguments → (work) → Assign and Output, both over
 * `$states` and the variables as they were when the state was entered; new values are
 * visible from the next state on.
 */
import { evaluateJsonataTemplate } from './asl-jsonata.ts';
import { applyPath, applyResultPath, applyTemplate, readPath, type PathSources } from './asl-jsonpath.ts';
import { TaskError } from './sfn-facade-errors.ts';

/** Workflow variables: a Parallel branch or Map iteration reads its outer scopes and writes its own. */
export class VariableScope {
  /** Created on the first assignment: most scopes (Map iterations, branches) assign nothing. */
  private values: Map<string, unknown> | undefined;

  constructor(private readonly parent?: VariableScope) {}

  get(name: string): unknown {
    return this.values?.has(name) ? this.values.get(name) : this.parent?.get(name);
  }

  child(): VariableScope {
    return new VariableScope(this);
  }

  assign(values: Record<string, unknown> | undefined): void {
    for (const [name, value] of Object.entries(values ?? {})) {
      this.values ??= new Map();
      this.values.set(name, value);
    }
  }

  all(): Record<string, unknown> {
    return { ...this.parent?.all(), ...Object.fromEntries(this.values ?? []) };
  }
}

/** One entry into one state. */
export interface StateFrame {
  name: string;
  state: Record<string, unknown>;
  jsonata: boolean;
  /** The raw state input. */
  input: unknown;
  scope: VariableScope;
  context: Record<string, unknown>;
}

/** A state's output and the variables it assigns. */
export interface StateResult {
  output: unknown;
  assigned?: Record<string, unknown>;
  next?: string;
}

/** The reserved `$states` variable. */
export function statesVariable(frame: StateFrame, extra: { result?: unknown; errorOutput?: unknown } = {}): Record<string, unknown> {
  return { input: frame.input, context: frame.context, ...extra };
}

export function jsonataBindings(frame: StateFrame, extra: { result?: unknown; errorOutput?: unknown; context?: unknown } = {}) {
  const { context, ...rest } = extra;
  const states = statesVariable(frame, rest);
  if (context !== undefined) states.context = context;
  return { ...frame.scope.all(), states };
}

export function pathSources(frame: StateFrame, extra: { result?: unknown; errorOutput?: unknown; context?: unknown } = {}): PathSources {
  const { context, ...rest } = extra;
  return {
    context: context ?? frame.context,
    variable: (name) => (name === 'states' ? statesVariable(frame, rest) : frame.scope.get(name)),
  };
}

/** A field that is a JSONata template in a JSONata state, evaluated; `undefined` when absent. */
export async function jsonataField(frame: StateFrame, field: string, extra: Parameters<typeof jsonataBindings>[1] = {}): Promise<unknown> {
  const template = frame.state[field];
  if (template === undefined) return undefined;
  return evaluateJsonataTemplate(template, jsonataBindings(frame, extra), field);
}

/** InputPath in JSONPath; JSONata states work on their raw input. */
export function effectiveInput(frame: StateFrame): unknown {
  return frame.jsonata ? frame.input : applyPath(frame.state.InputPath, frame.input, pathSources(frame), 'InputPath');
}

/** What a Task or Parallel works on: `Arguments` (JSONata) or `Parameters` (JSONPath), by default the input. */
export async function workArguments(frame: StateFrame, effective: unknown): Promise<unknown> {
  if (frame.jsonata) return frame.state.Arguments === undefined ? frame.input : jsonataField(frame, 'Arguments');
  const parameters = frame.state.Parameters;
  return parameters === undefined ? effective : applyTemplate(parameters, effective, pathSources(frame));
}

/**
 * The end of a state that produced `result` (Task, Map, Parallel, Pass) or none (Choice, Wait,
 * Succeed). `assignOn` names where a rule's own Assign and Output live (a Choice rule).
 */
export async function finishState(
  frame: StateFrame,
  effective: unknown,
  work: { result?: unknown; hasResult: boolean },
  fields: { assign?: unknown; output?: unknown; prefix?: string } = { assign: frame.state.Assign, output: frame.state.Output },
): Promise<StateResult> {
  const prefix = fields.prefix ?? '';
  if (frame.jsonata) {
    const bindings = jsonataBindings(frame, work.hasResult ? { result: work.result } : {});
    const [assigned, output] = await Promise.all([
      fields.assign === undefined ? undefined : evaluateJsonataTemplate(fields.assign, bindings, `${prefix}Assign`),
      fields.output === undefined ? (work.hasResult ? work.result : frame.input) : evaluateJsonataTemplate(fields.output, bindings, `${prefix}Output`),
    ]);
    return { output, assigned: assigned as Record<string, unknown> | undefined };
  }
  const { state } = frame;
  const selected = work.hasResult && state.ResultSelector !== undefined ? applyTemplate(state.ResultSelector, work.result, pathSources(frame)) : work.result;
  const data = work.hasResult ? selected : effective;
  const assigned = fields.assign === undefined ? undefined : (applyTemplate(fields.assign, data, pathSources(frame)) as Record<string, unknown>);
  const merged = work.hasResult ? applyResultPath(state.ResultPath, frame.input, selected) : effective;
  return { output: applyPath(state.OutputPath, merged, pathSources(frame), 'OutputPath'), assigned };
}

/** What a matching Catch clause makes of `errorOutput`: its Output (or ResultPath) and its Assign. */
export async function catcherResult(frame: StateFrame, catcher: Record<string, unknown>, index: number, errorOutput: unknown): Promise<StateResult> {
  const next = String(catcher.Next);
  if (frame.jsonata) {
    const bindings = jsonataBindings(frame, { errorOutput });
    const [assigned, output] = await Promise.all([
      catcher.Assign === undefined ? undefined : evaluateJsonataTemplate(catcher.Assign, bindings, `Catch[${index}]/Assign`),
      catcher.Output === undefined ? errorOutput : evaluateJsonataTemplate(catcher.Output, bindings, `Catch[${index}]/Output`),
    ]);
    return { output, assigned: assigned as Record<string, unknown> | undefined, next };
  }
  const sources = pathSources(frame, { errorOutput });
  const assigned = catcher.Assign === undefined ? undefined : (applyTemplate(catcher.Assign, errorOutput, sources) as Record<string, unknown>);
  const resultPath = 'ResultPath' in catcher ? catcher.ResultPath : '$';
  return { output: applyResultPath(resultPath, frame.input, errorOutput), assigned, next };
}

/** A numeric field: a number, a JSONata expression, or (JSONPath) its `…Path` form. */
export async function numberField(frame: StateFrame, name: string): Promise<number | undefined> {
  const value = frame.state[name];
  if (typeof value === 'number') return value;
  if (frame.jsonata && value !== undefined) {
    const evaluated = await evaluateJsonataTemplate(value, jsonataBindings(frame), name);
    if (typeof evaluated !== 'number')
      throw new TaskError('States.QueryEvaluationError', `The field '${name}' must evaluate to a number, not ${JSON.stringify(evaluated)}`);
    return evaluated;
  }
  const path = frame.state[`${name}Path`];
  if (typeof path !== 'string') return undefined;
  const read = readPath(path, effectiveInput(frame), pathSources(frame), `${name}Path`);
  if (typeof read !== 'number') throw new TaskError('States.Runtime', `The value of ${name}Path must be a number`);
  return read;
}
