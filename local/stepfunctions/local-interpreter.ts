/**
 * What the facade's engine needs from a state machine interpreter, whichever runs the
 * machine (aws-local-stepfunctions or asl-interpreter.ts; see sfn-facade-interpreter.ts):
 * start a run, stop it, learn how it ended, and receive its event log as it happens.
 */
import type { StateMachine } from 'aws-local-stepfunctions';

type Run = ReturnType<StateMachine['run']>;

/** One event of the interpreter's log, before the facade maps it to a history event. */
export type InterpreterEvent = Run['eventLogs'] extends AsyncGenerator<infer E> ? E : never;

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
