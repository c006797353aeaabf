/**
 * What the facade's engine needs from the state machine interpreter (asl-interpreter.ts, bound
 * to a definition by sfn-facade-interpreter.ts): start a run, stop it, learn how it ended, and
 * receive its event log as it happens.
 */

/** The ASL state types. */
export type StateType = 'Pass' | 'Task' | 'Choice' | 'Wait' | 'Succeed' | 'Fail' | 'Parallel' | 'Map';

/** The state an event is about: `output` once it has exited. */
export interface StateData {
  name: string;
  type: StateType;
  input: unknown;
  output?: unknown;
}

/** A failure as a Retrier or Catcher matches it. */
export interface ErrorInfo {
  Error: string;
  Cause: unknown;
}

interface StateEventBase {
  /** Epoch milliseconds. */
  timestamp: number;
  state: StateData;
}

interface MapIterationEventBase {
  timestamp: number;
  /** The Map state the iteration belongs to. */
  parentState: StateData;
  index: number;
}

/**
 * One event of the interpreter's log, before the facade maps it to a history event (see
 * sfn-facade-history.ts). The execution's own start and end are not events here: the facade
 * writes them from the run's outcome.
 */
export type InterpreterEvent =
  | (StateEventBase & { type: 'StateEntered' })
  | (StateEventBase & { type: 'StateExited' })
  | (StateEventBase & ErrorInfo & { type: 'StateFailed' })
  | (StateEventBase & { type: 'StateRetried'; retry: { retrier: Record<string, unknown>; attempt: number } })
  | (StateEventBase & { type: 'StateCaught'; catch: { catcher: Record<string, unknown> } })
  | (MapIterationEventBase & { type: 'MapIterationStarted' })
  | (MapIterationEventBase & { type: 'MapIterationSucceeded' })
  | (MapIterationEventBase & ErrorInfo & { type: 'MapIterationFailed' });

/** How a run ended, in the terms of DescribeExecution. */
export type RunOutcome =
  | { status: 'SUCCEEDED'; output: unknown }
  | { status: 'FAILED'; error?: string; cause?: string }
  | { status: 'TIMED_OUT' }
  | { status: 'ABORTED' };

/** The execution a run belongs to, as `$$.Execution` and `$$.StateMachine` show it. */
export interface RunContext {
  executionArn: string;
  executionName: string;
  stateMachineArn: string;
  stateMachineName: string;
}

/** One started run. */
export interface InterpreterRun {
  /** Stops the run: pending Wait states and retries end at once. */
  abort(): void;
  /** Never rejects. */
  outcome: Promise<RunOutcome>;
  /** Settles once the run's events have all gone to `onEvent` (they may trail the outcome a little). */
  logged: Promise<unknown>;
}

/** One state machine definition, bound and ready to run any number of times. */
export interface LocalInterpreter {
  /** Starts a run; `onEvent` receives its event log as it happens. */
  run(input: unknown, context: RunContext, onEvent: (event: InterpreterEvent) => void): InterpreterRun;
}
