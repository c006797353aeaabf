/**
 * The local runtime's ASL interpreter: every state machine runs on it. It runs every state
 * type (Pass, Task, Choice, Wait, Succeed, Fail, Parallel, inline Map), in either query
 * language, with Retry and Catch, and logs the events the facade maps to history. Tasks are
 * delegated to `runTask` (asl-tasks.ts): workers, Lambda invokes, task tokens and mocks.
 */
import { runMap, runParallel } from './asl-branches.ts';
import { checkDefinition, machineLanguage, stateLanguage, type QueryLanguage, type StateGraph } from './asl-definition.ts';
import { evaluateJsonataTemplate } from './asl-jsonata.ts';
import { readPath } from './asl-jsonpath.ts';
import { matchesJsonPathRule } from './asl-choice-rules.ts';
import { EventSink, failureOf, isUncatchable, RunAborted, RunStop, sleep, type StopSignal } from './asl-run-support.ts';
import {
  catcherResult,
  effectiveInput,
  finishState,
  jsonataBindings,
  numberField,
  pathSources,
  VariableScope,
  workArguments,
  type StateFrame,
  type StateResult,
} from './asl-state-io.ts';
import { timers, type TimerEntry } from './asl-timer-queue.ts';
import { TaskError } from './sfn-facade-errors.ts';
import type { InterpreterEvent, InterpreterRun, RunContext, RunOutcome, StateData, StateType } from './local-interpreter.ts';

type State = Record<string, unknown>;

/** One call of a Task's resource. */
export interface AslTaskCall {
  stateName: string;
  /** Arguments (JSONata) or the effective Parameters (JSONPath). */
  args: unknown;
  /** The task token of this attempt, minted when the state first read it. */
  takeToken(): string;
  timeoutSeconds?: number;
  heartbeatSeconds?: number;
}

export interface AslRunOptions {
  context: RunContext;
  runTask(call: AslTaskCall): Promise<unknown>;
  mintToken(): string;
  /** Multiplies the duration of Wait states. */
  waitTimeScale: number;
  /** Receives the run's event log as it happens. */
  onEvent(event: InterpreterEvent): void;
}

/** A checked definition, ready to run any number of times. */
export class AslMachine {
  private readonly language: QueryLanguage;

  constructor(private readonly definition: StateGraph & { TimeoutSeconds?: number }) {
    checkDefinition(definition);
    this.language = machineLanguage(definition);
  }

  /**
   * Starts a run. A run that waits holds little: its stop switch, one timer queue entry,
   * and the suspended states; its outcome settles exactly once, whichever comes first.
   */
  run(input: unknown, options: AslRunOptions): InterpreterRun {
    const stopped = new RunStop();
    const events = new EventSink<InterpreterEvent>(options.onEvent);
    const execution = new AslExecution(this.language, options, events, input);
    let timer: TimerEntry | undefined;
    let settle!: (outcome: RunOutcome) => void;
    const outcome = new Promise<RunOutcome>((resolve) => (settle = resolve));
    let ended = false;
    const end = (result: RunOutcome) => {
      if (ended) return;
      ended = true;
      if (timer) timers.cancel(timer);
      events.close();
      // Whatever still runs (other Map iterations, a task's wait) stops with the run.
      stopped.abort();
      settle(result);
    };
    stopped.addEventListener('abort', () => end({ status: 'ABORTED' }));
    const seconds = this.definition.TimeoutSeconds;
    if (typeof seconds === 'number') timer = timers.schedule(seconds * 1000, () => end({ status: 'TIMED_OUT' }));
    execution.runGraph(this.definition, input, new VariableScope(), stopped).then(
      (output) => end({ status: 'SUCCEEDED', output }),
      (error: unknown) => {
        if (error instanceof RunAborted) return end({ status: 'ABORTED' });
        const { Error: name, Cause: cause } = failureOf(error);
        end({ status: 'FAILED', ...(name ? { error: name } : {}), ...(cause ? { cause } : {}) });
      },
    );
    // Events are handed over as they happen: the log is complete when the outcome is.
    return { abort: () => stopped.abort(), outcome, logged: outcome };
  }
}

/** One execution: the states it runs share its options and its event log. */
export class AslExecution {
  private readonly startTime = new Date().toISOString();

  constructor(
    private readonly language: QueryLanguage,
    readonly options: AslRunOptions,
    readonly events: EventSink<InterpreterEvent>,
    private readonly executionInput: unknown,
  ) {}

  /** Runs states from StartAt to an end; resolves with the last output. */
  async runGraph(graph: StateGraph, input: unknown, scope: VariableScope, signal: StopSignal): Promise<unknown> {
    let name = graph.StartAt;
    let data = input;
    for (;;) {
      if (signal.aborted) throw new RunAborted();
      const state = graph.States[name];
      if (!state) throw new TaskError('States.Runtime', `The state "${name}" does not exist`);
      const { output, next } = await this.runState(name, state, data, scope, signal);
      if (next === undefined) return output;
      name = next;
      data = output;
    }
  }

  /**
   * Builds the context object a state sees as `$$` or `$states.context`. A retry is no new
   * entry: Step Functions gives every attempt the EnteredTime of the first, with its RetryCount.
   */
  contextFor(name: string, enteredTime: string, retryCount: number): Record<string, unknown> {
    const { context } = this.options;
    return {
      Execution: { Id: context.executionArn, Input: this.executionInput, Name: context.executionName, RedriveCount: 0, StartTime: this.startTime },
      StateMachine: { Id: context.stateMachineArn, Name: context.stateMachineName },
      State: { Name: name, EnteredTime: enteredTime, RetryCount: retryCount },
    };
  }

  private async runState(name: string, state: State, input: unknown, scope: VariableScope, signal: StopSignal): Promise<StateResult> {
    // Any other Type fails in `body` below (asl-validator refuses it when the tool loads).
    const stateData: StateData = { name, type: state.Type as StateType, input };
    this.events.push({ type: 'StateEntered', timestamp: Date.now(), state: stateData });
    const jsonata = stateLanguage(state, this.language) === 'JSONata';
    const retriers = (state.Retry as State[] | undefined) ?? [];
    const catchers = (state.Catch as State[] | undefined) ?? [];
    const attempts = retriers.map(() => 0);
    const enteredTime = new Date().toISOString();
    for (let retryCount = 0; ; retryCount++) {
      const frame: StateFrame = { name, state, jsonata, input, scope, context: this.contextFor(name, enteredTime, retryCount) };
      let result: StateResult;
      try {
        result = await this.body(frame, signal);
      } catch (error) {
        if (error instanceof RunAborted || signal.aborted) throw new RunAborted();
        const failure = failureOf(error);
        this.events.push({ type: 'StateFailed', timestamp: Date.now(), state: stateData, ...failure });
        if (isUncatchable(failure.Error)) throw error;
        const retry = retriers.findIndex((retrier) => matchesError(retrier.ErrorEquals, failure.Error));
        const retrier = retriers[retry];
        const attempted = attempts[retry] ?? 0;
        if (retrier && attempted < ((retrier.MaxAttempts as number | undefined) ?? 3)) {
          const delay = retryDelaySeconds(retrier, attempted);
          attempts[retry] = attempted + 1;
          this.events.push({ type: 'StateRetried', timestamp: Date.now(), state: stateData, retry: { retrier, attempt: attempted + 1 } });
          await sleep(delay * 1000, signal);
          if (signal.aborted) throw new RunAborted();
          continue;
        }
        const caught = catchers.findIndex((catcher) => matchesError(catcher.ErrorEquals, failure.Error));
        const catcher = catchers[caught];
        if (!catcher) throw error;
        this.events.push({ type: 'StateCaught', timestamp: Date.now(), state: stateData, catch: { catcher } });
        result = await catcherResult(frame, catcher, caught, failure);
      }
      scope.assign(result.assigned);
      this.events.push({ type: 'StateExited', timestamp: Date.now(), state: { ...stateData, output: result.output } });
      const next = result.next ?? (state.Type === 'Succeed' || state.End === true ? undefined : (state.Next as string | undefined));
      return { output: result.output, next };
    }
  }

  /** Not async itself (one suspended frame less per waiting run); a throw here is the state's failure too. */
  private body(frame: StateFrame, signal: StopSignal): Promise<StateResult> {
    switch (frame.state.Type) {
      case 'Pass':
        return this.pass(frame);
      case 'Task':
        return this.task(frame);
      case 'Choice':
        return this.choice(frame);
      case 'Wait':
        return this.wait(frame, signal);
      case 'Succeed':
        return finishState(frame, effectiveInput(frame), { hasResult: false });
      case 'Fail':
        return this.fail(frame);
      case 'Parallel':
        return runParallel(this, frame, signal);
      case 'Map':
        return runMap(this, frame, signal);
      default:
        throw new TaskError('States.Runtime', `state "${frame.name}" has the unknown Type ${String(frame.state.Type)}`);
    }
  }

  private async pass(frame: StateFrame): Promise<StateResult> {
    if (frame.jsonata) return finishState(frame, frame.input, { hasResult: false });
    const effective = effectiveInput(frame);
    const result = 'Result' in frame.state ? frame.state.Result : await workArguments(frame, effective);
    return finishState(frame, effective, { result, hasResult: true });
  }

  private async task(frame: StateFrame): Promise<StateResult> {
    let pending: string | undefined;
    const mint = () => (pending ??= this.options.mintToken());
    frame.context.Task = {
      get Token() {
        return mint();
      },
    };
    const effective = effectiveInput(frame);
    const args = await workArguments(frame, effective);
    const [timeoutSeconds, heartbeatSeconds] = await Promise.all([numberField(frame, 'TimeoutSeconds'), numberField(frame, 'HeartbeatSeconds')]);
    const takeToken = () => {
      const token = mint();
      pending = undefined;
      return token;
    };
    const result = await this.options.runTask({ stateName: frame.name, args, takeToken, timeoutSeconds, heartbeatSeconds });
    return finishState(frame, effective, { result, hasResult: true });
  }

  private async choice(frame: StateFrame): Promise<StateResult> {
    const effective = effectiveInput(frame);
    const rules = (frame.state.Choices as State[] | undefined) ?? [];
    for (const [index, rule] of rules.entries()) {
      let matched: boolean;
      if (frame.jsonata) {
        const condition = await evaluateJsonataTemplate(rule.Condition, jsonataBindings(frame), `Choices[${index}]/Condition`);
        if (typeof condition !== 'boolean') {
          throw new TaskError('States.QueryEvaluationError', `The Condition of Choices[${index}] must evaluate to a boolean, not ${JSON.stringify(condition)}`);
        }
        matched = condition;
      } else {
        matched = matchesJsonPathRule(rule, effective, pathSources(frame));
      }
      if (matched) {
        const done = await finishState(frame, effective, { hasResult: false }, { assign: rule.Assign, output: rule.Output, prefix: `Choices[${index}]/` });
        return { ...done, next: String(rule.Next) };
      }
    }
    if (typeof frame.state.Default !== 'string') {
      throw new TaskError('States.NoChoiceMatched', `No Choice Rule matched in state "${frame.name}" and it has no Default`);
    }
    return { ...(await finishState(frame, effective, { hasResult: false })), next: frame.state.Default };
  }

  /** A chain rather than an async function: while it sleeps, a run holds no suspended frame for it. */
  private wait(frame: StateFrame, signal: StopSignal): Promise<StateResult> {
    return this.waitDuration(frame).then(({ effective, ms }) =>
      sleep(ms * this.options.waitTimeScale, signal).then(() => {
        if (signal.aborted) throw new RunAborted();
        return finishState(frame, effective, { hasResult: false });
      }),
    );
  }

  private async waitDuration(frame: StateFrame): Promise<{ effective: unknown; ms: number }> {
    const effective = effectiveInput(frame);
    const { state } = frame;
    let ms: number;
    const seconds = await numberField(frame, 'Seconds');
    if (seconds !== undefined) {
      if (!Number.isInteger(seconds) || seconds < 0)
        throw new TaskError('States.Runtime', `The Seconds of state "${frame.name}" must be a non-negative integer`);
      ms = seconds * 1000;
    } else {
      const timestamp = frame.jsonata
        ? await evaluateJsonataTemplate(state.Timestamp, jsonataBindings(frame), 'Timestamp')
        : state.TimestampPath !== undefined
          ? readPath(String(state.TimestampPath), effective, pathSources(frame), 'TimestampPath')
          : state.Timestamp;
      const at = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
      if (Number.isNaN(at)) throw new TaskError('States.Runtime', `The Timestamp of state "${frame.name}" must be an RFC 3339 timestamp`);
      ms = Math.max(0, at - Date.now());
    }
    return { effective, ms };
  }

  private async fail(frame: StateFrame): Promise<never> {
    const { state } = frame;
    const field = async (name: 'Error' | 'Cause') => {
      if (frame.jsonata) return state[name] === undefined ? undefined : evaluateJsonataTemplate(state[name], jsonataBindings(frame), name);
      const path = state[`${name}Path`];
      return path === undefined ? state[name] : readPath(String(path), frame.input, pathSources(frame), `${name}Path`);
    };
    const [error, cause] = await Promise.all([field('Error'), field('Cause')]);
    throw new TaskError(error === undefined ? '' : String(error), cause === undefined ? '' : String(cause));
  }
}

/** States.ALL matches any error; States.TaskFailed any but States.Timeout. */
function matchesError(errorEquals: unknown, error: string): boolean {
  const names = Array.isArray(errorEquals) ? (errorEquals as string[]) : [];
  return names.some((name) => name === error || name === 'States.ALL' || (name === 'States.TaskFailed' && error !== 'States.Timeout'));
}

function retryDelaySeconds(retrier: State, attempt: number): number {
  const interval = (retrier.IntervalSeconds as number | undefined) ?? 1;
  const backoff = (retrier.BackoffRate as number | undefined) ?? 2;
  let delay = interval * backoff ** attempt;
  if (typeof retrier.MaxDelaySeconds === 'number') delay = Math.min(delay, retrier.MaxDelaySeconds);
  return retrier.JitterStrategy === 'FULL' ? Math.random() * delay : delay;
}
