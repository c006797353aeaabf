/**
 * The WorkflowEngine port over AWS Step Functions. The only module that calls the
 * Step Functions API; the same client code talks to AWS and to the local facade.
 */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidToken,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StartSyncExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import {
  ExecutionNotFoundError,
  TaskGoneError,
  type ExecutionSnapshot,
  type ExecutionStatus,
  type StartExecutionInput,
  type WorkflowEngine,
} from '../operations/ports.ts';
import { parseJsonOrText } from '../shared/json-values.ts';
import { executionArnFor } from './execution-arn.ts';
import type { StartExecutionSender } from './hot-start-execution.ts';

export { executionArnFor };

export class StepFunctionsEngine implements WorkflowEngine {
  readonly #starts: StartExecutionSender;

  /**
   * `starts` sends a start's StartExecution: the MCP function passes `HotStartExecution`
   * (lambdas/aws/hot-start-execution.ts); by default the client.
   */
  constructor(
    private readonly client: SFNClient,
    starts?: StartExecutionSender,
  ) {
    this.#starts = starts ?? { send: (input) => client.send(new StartExecutionCommand(input)) };
  }

  executionArnFor(stateMachineArn: string, name: string): string {
    return executionArnFor(stateMachineArn, name);
  }

  async start(input: StartExecutionInput): Promise<{ executionArn: string }> {
    try {
      const out = await this.#starts.send({ stateMachineArn: input.stateMachineArn, name: input.name, input: JSON.stringify(input.input) });
      // The name fixes the ARN, so a reply without one still names this execution.
      return { executionArn: out.executionArn ?? executionArnFor(input.stateMachineArn, input.name) };
    } catch (error) {
      // Same name, other input string: a retry of this very record whose arguments
      // serialised in another key order. The name is the record's, so is the execution.
      if (error instanceof ExecutionAlreadyExists) {
        return { executionArn: executionArnFor(input.stateMachineArn, input.name) };
      }
      throw error;
    }
  }

  async startSync(input: StartExecutionInput, signal?: AbortSignal): Promise<ExecutionSnapshot> {
    const out = await this.client.send(
      new StartSyncExecutionCommand({ stateMachineArn: input.stateMachineArn, name: input.name, input: JSON.stringify(input.input) }),
      signal ? { abortSignal: signal } : {},
    );
    if (!out.executionArn) throw new Error(`StartSyncExecution of ${input.name} returned no executionArn`);
    return snapshotOf(out.executionArn, out);
  }

  async describe(executionArn: string): Promise<ExecutionSnapshot> {
    try {
      const out = await this.client.send(new DescribeExecutionCommand({ executionArn }));
      return snapshotOf(executionArn, out);
    } catch (error) {
      // A deploy that removed the tool deleted its machine: its executions are gone with it.
      if (error instanceof ExecutionDoesNotExist || error instanceof StateMachineDoesNotExist) throw new ExecutionNotFoundError(executionArn, { cause: error });
      throw error;
    }
  }

  async stop(executionArn: string, reason: { error: string; cause: string }): Promise<void> {
    try {
      await this.client.send(new StopExecutionCommand({ executionArn, error: reason.error, cause: reason.cause }));
    } catch (error) {
      // A deploy that removed the tool deleted its machine: its executions are gone with it.
      if (error instanceof ExecutionDoesNotExist || error instanceof StateMachineDoesNotExist) throw new ExecutionNotFoundError(executionArn, { cause: error });
      throw error;
    }
  }

  async sendTaskSuccess(taskToken: string, output: unknown): Promise<void> {
    await taskCall(() => this.client.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) })));
  }

  async sendTaskFailure(taskToken: string, failure: { error: string; cause: string }): Promise<void> {
    await taskCall(() => this.client.send(new SendTaskFailureCommand({ taskToken, error: failure.error, cause: failure.cause })));
  }
}

/** A task call whose token no longer names a waiting task throws TaskGoneError; other errors pass. */
async function taskCall(send: () => Promise<unknown>): Promise<void> {
  try {
    await send();
  } catch (error) {
    if (error instanceof TaskTimedOut || error instanceof TaskDoesNotExist || error instanceof InvalidToken) throw new TaskGoneError({ cause: error });
    throw error;
  }
}

/** The fields StartSyncExecution and DescribeExecution share, as the port's snapshot. */
interface ExecutionFields {
  status?: string;
  output?: string;
  error?: string;
  cause?: string;
  startDate?: Date;
  stopDate?: Date;
  input?: string;
}

function snapshotOf(executionArn: string, out: ExecutionFields): ExecutionSnapshot {
  return {
    executionArn,
    status: out.status as ExecutionStatus,
    ...(out.output === undefined ? {} : { output: parseJsonOrText(out.output) }),
    ...(out.error === undefined ? {} : { error: out.error }),
    ...(out.cause === undefined ? {} : { cause: out.cause }),
    ...(out.startDate ? { startDate: out.startDate } : {}),
    ...(out.stopDate ? { stopDate: out.stopDate } : {}),
    ...(out.input === undefined ? {} : { input: parseJsonOrText(out.input) }),
  };
}
