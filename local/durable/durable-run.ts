/**
 * One durable execution, driven as the Lambda service drives it: the handler is invoked with
 * the operations checkpointed so far (replay), returns PENDING while it waits, and is invoked
 * again when a wait's timer fires, a step's retry is due or a callback is answered. The
 * operations themselves live in the checkpoint worker; this module owns the timers and the
 * invocations, one at a time per execution.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import {
  type DurableExecutionApiClient,
  type DurableExecutionInvocationInput,
  DurableExecutionInvocationInputWithClient,
  type DurableExecutionInvocationOutput,
  type DurableLambdaHandler,
  type ErrorObject,
  type Operation,
  type OperationUpdate,
} from '@aws/durable-execution-sdk-js';
import type { CheckpointWorkerClient } from './checkpoint-worker-client.ts';

export type RunStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'STOPPED';

interface InvocationStart {
  checkpointToken: string;
  executionId: string;
  invocationId: string;
  operationEvents: { operation: Operation }[];
  updatedOperationIds: string[];
}

interface PolledOperation {
  operation: Operation;
  update?: OperationUpdate;
}

/** What a run needs from its service: the backend, the handler and its transport. */
export interface DurableRunParts {
  worker: CheckpointWorkerClient;
  handler: DurableLambdaHandler;
  /** The transport the handler checkpoints through: a Lambda client on the local service. */
  transport: () => DurableExecutionApiClient;
  functionName: string;
  functionArn: string;
}

/** A running or finished execution. */
export class DurableRun {
  status: RunStatus = 'RUNNING';
  result: string | undefined;
  error: ErrorObject | undefined;
  endTimestamp: Date | undefined;
  /** The id the checkpoint worker knows this execution by. */
  workerExecutionId = '';
  private executionOperationId = '';
  private readonly timers = new Set<NodeJS.Timeout>();
  private invoking = false;
  private invokeAgain = false;
  private readonly finished: Promise<void>;
  private markFinished: () => void = () => {};

  constructor(
    private readonly parts: DurableRunParts,
    readonly arn: string,
  ) {
    this.finished = new Promise((resolve) => {
      this.markFinished = resolve;
    });
  }

  /** Resolves when the execution has ended, however it ended. */
  whenFinished(): Promise<void> {
    return this.finished;
  }

  /** Starts the execution in the worker and its first invocation; resolves once it is started. */
  async start(payload: string | undefined): Promise<void> {
    const first = await this.parts.worker.call<InvocationStart>('StartDurableExecution', {
      payload,
      invocationId: randomUUID(),
    });
    this.workerExecutionId = first.executionId;
    this.executionOperationId = first.operationEvents[0]?.operation.Id ?? '';
    void this.pollUpdates();
    void this.invoke(first);
  }

  /** Cancels this run's timers when the service closes: the execution stays as it was. */
  halt(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Ends a running execution as STOPPED: no timer fires and no invocation starts after it. */
  stop(error: ErrorObject | undefined): Date {
    this.finish('STOPPED', undefined, error);
    return this.endTimestamp ?? new Date();
  }

  private async pollUpdates(): Promise<void> {
    while (this.status === 'RUNNING') {
      let polled: { operations: PolledOperation[] };
      try {
        polled = await this.parts.worker.call('PollCheckpointData', { executionId: this.workerExecutionId });
      } catch (error) {
        this.failInternally(error);
        return;
      }
      for (const { operation, update } of polled.operations) this.react(operation, update);
    }
  }

  /** What the service does after a checkpoint: arm a timer, or invoke again. */
  private react(operation: Operation, update: OperationUpdate | undefined): void {
    if (this.status !== 'RUNNING' || !operation.Id) return;
    const id = operation.Id;
    if (operation.Type === 'WAIT' && update?.Action === 'START') {
      const end = operation.WaitDetails?.ScheduledEndTimestamp;
      this.at(end, () => this.complete(id, 'SUCCEEDED'));
    } else if (operation.Type === 'STEP' && update?.Action === 'RETRY') {
      this.at(operation.StepDetails?.NextAttemptTimestamp, () => this.complete(id, 'READY'));
    } else if (operation.Type === 'CALLBACK' && operation.Status !== 'STARTED') {
      void this.invoke();
    } else if (operation.Type === 'EXECUTION' && update) {
      // The SDK checkpoints the execution's end itself when the result is too large to return.
      if (update.Action === 'SUCCEED') this.finish('SUCCEEDED', update.Payload, undefined);
      if (update.Action === 'FAIL') this.finish('FAILED', undefined, update.Error);
    }
  }

  private at(when: Date | undefined, then: () => Promise<void>): void {
    const delay = when ? Math.max(0, new Date(when).getTime() - Date.now()) : 0;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.status !== 'RUNNING') return;
      then().then(
        () => this.invoke(),
        (error: unknown) => this.failInternally(error),
      );
    }, delay);
    this.timers.add(timer);
  }

  private complete(operationId: string, status: 'SUCCEEDED' | 'READY'): Promise<void> {
    return this.parts.worker.call('UpdateCheckpointData', {
      executionId: this.workerExecutionId,
      operationId,
      operationData: { Status: status },
    });
  }

  /** Invokes the handler, or, while an invocation runs, invokes again once it returns. */
  private async invoke(first?: InvocationStart): Promise<void> {
    if (this.status !== 'RUNNING') return;
    if (this.invoking) {
      this.invokeAgain = true;
      return;
    }
    this.invoking = true;
    try {
      const invocation =
        first ??
        (await this.parts.worker.call<InvocationStart>('StartInvocation', {
          executionId: this.workerExecutionId,
          invocationId: randomUUID(),
        }));
      const output = await this.runHandler(invocation);
      const completed = await this.parts.worker.call<{ hasDirtyOperations: boolean }>('CompleteInvocation', {
        executionId: this.workerExecutionId,
        invocationId: invocation.invocationId,
        error: output.Status === 'FAILED' ? output.Error : undefined,
      });
      if (output.Status === 'SUCCEEDED') this.finish('SUCCEEDED', output.Result, undefined);
      else if (output.Status === 'FAILED') this.finish('FAILED', undefined, output.Error);
      else if (completed.hasDirtyOperations) this.invokeAgain = true;
    } catch (error) {
      this.failInternally(error);
    } finally {
      this.invoking = false;
    }
    if (this.invokeAgain && this.status === 'RUNNING') {
      this.invokeAgain = false;
      await this.invoke();
    }
  }

  private async runHandler(invocation: InvocationStart): Promise<DurableExecutionInvocationOutput> {
    const input = {
      DurableExecutionArn: this.arn,
      CheckpointToken: invocation.checkpointToken,
      InitialExecutionState: { Operations: invocation.operationEvents.map((event) => event.operation), NextMarker: '' },
    };
    const event = new DurableExecutionInvocationInputWithClient(input, this.parts.transport());
    // The constructor keeps three fields; the service also says which operations changed.
    Object.assign(event, { UpdatedOperationIds: invocation.updatedOperationIds });
    try {
      return await this.parts.handler(event as unknown as DurableExecutionInvocationInput, this.context());
    } catch (error) {
      // An error the SDK did not catch is the invocation's, as Lambda reports an unhandled one.
      return { Status: 'FAILED', Error: errorObjectOf(error) } as DurableExecutionInvocationOutput;
    }
  }

  private context(): Context {
    const unsupported = () => {
      throw new Error('not supported by the local durable service');
    };
    return {
      callbackWaitsForEmptyEventLoop: false,
      functionName: this.parts.functionName,
      functionVersion: '$LATEST',
      invokedFunctionArn: this.parts.functionArn,
      memoryLimitInMB: '1024',
      awsRequestId: randomUUID(),
      logGroupName: `/aws/lambda/${this.parts.functionName}`,
      logStreamName: 'local',
      // Lambda's 15 minutes: the SDK decides from it whether to wait in-process.
      getRemainingTimeInMillis: () => 900_000,
      done: unsupported,
      fail: unsupported,
      succeed: unsupported,
    };
  }

  private finish(status: Exclude<RunStatus, 'RUNNING'>, result: string | undefined, error: ErrorObject | undefined) {
    if (this.status !== 'RUNNING') return;
    this.status = status;
    this.result = result;
    this.error = error;
    this.endTimestamp = new Date();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.markFinished();
    // Closes the execution in the worker too, so it refuses later invocations; a failure here
    // changes nothing the caller sees, since the status above is the service's own record.
    this.parts.worker
      .call('UpdateCheckpointData', {
        executionId: this.workerExecutionId,
        operationId: this.executionOperationId,
        operationData: { Status: status === 'SUCCEEDED' ? 'SUCCEEDED' : status === 'STOPPED' ? 'STOPPED' : 'FAILED' },
        payload: result,
        error,
      })
      .catch((closeError: unknown) => {
        console.error(
          JSON.stringify({ level: 'warn', message: 'durable execution not closed in the checkpoint worker', arn: this.arn, error: String(closeError) }),
        );
      });
  }

  private failInternally(error: unknown): void {
    if (this.status !== 'RUNNING') return;
    console.error(JSON.stringify({ level: 'error', message: 'local durable execution failed internally', arn: this.arn, error: String(error) }));
    this.finish('FAILED', undefined, { ErrorType: 'Local.ServiceError', ErrorMessage: errorObjectOf(error).ErrorMessage });
  }
}

/** An error as Lambda's ErrorObject. */
export function errorObjectOf(error: unknown): ErrorObject {
  if (error instanceof Error) return { ErrorType: error.name, ErrorMessage: error.message, StackTrace: error.stack?.split('\n') };
  if (error && typeof error === 'object' && 'message' in error) return { ErrorType: 'Error', ErrorMessage: String(error.message) };
  return { ErrorType: 'Error', ErrorMessage: String(error) };
}
