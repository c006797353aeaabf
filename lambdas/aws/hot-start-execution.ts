/**
 * A start's `StartExecution` over the hot wire (hot-call.ts). Its fallback to the SDK path is
 * safe because the execution's name is derived from the operation's token: one that went
 * through and is sent again is refused as `ExecutionAlreadyExists` (or, with the same input,
 * answered with the same execution), as after the SDK's own retry of it. That error, a
 * throttle or a 5xx is deserialized by the SDK from the hot answer, so the engine sees the
 * SDK's own typed errors.
 */
import { type SFNClient, StartExecutionCommand, type StartExecutionCommandInput } from '@aws-sdk/client-sfn';
import { HotCall, type HotCallOptions, type HotOperation } from './hot-call.ts';

/** What StartExecution answers the engine. */
export interface StartExecutionOutput {
  readonly executionArn?: string;
  readonly startDate?: Date;
}

/** Sends StartExecution: the SDK client's own `send` or {@link HotStartExecution}. */
export interface StartExecutionSender {
  send(input: StartExecutionCommandInput): Promise<StartExecutionOutput>;
}

const START_EXECUTION: HotOperation<StartExecutionCommandInput, StartExecutionOutput> = {
  name: 'StartExecution',
  target: 'AWSStepFunctions.StartExecution',
  write: true,
  answers: new Set(['ExecutionAlreadyExists']),
  read: (body) => {
    if (body === undefined) return undefined;
    const { executionArn, startDate, ...rest } = body as { executionArn?: unknown; startDate?: unknown };
    // Anything else (a field a newer API adds) is the SDK's to read.
    if (typeof executionArn !== 'string' || typeof startDate !== 'number' || Object.keys(rest).length > 0) return undefined;
    // As the SDK reads an epoch-seconds timestamp.
    return { executionArn, startDate: new Date(Math.round(startDate * 1000)) };
  },
  command: async (input) => new StartExecutionCommand(input),
};

/** StartExecution over the client's hot wire, falling back to the SDK path as hot-call.ts says. */
export class HotStartExecution implements StartExecutionSender {
  readonly #calls: HotCall<SFNClient>;

  constructor(client: SFNClient, options: HotCallOptions = {}) {
    this.#calls = new HotCall(client, 'states', undefined, { noun: 'starts', ...options });
  }

  send(input: StartExecutionCommandInput): Promise<StartExecutionOutput> {
    return this.#calls.send(START_EXECUTION, input);
  }
}
