/** An in-memory WorkflowEngine for core unit tests: executions finish when the test says so. */
import {
  ExecutionNotFoundError,
  TaskGoneError,
  type ExecutionSnapshot,
  type StartExecutionInput,
  type WorkflowEngine,
} from '../../lambdas/operations/ports.ts';

export class FakeWorkflowEngine implements WorkflowEngine {
  readonly executions = new Map<string, ExecutionSnapshot & { input: unknown; stateMachineArn: string }>();
  startCalls = 0;
  stopCalls = 0;
  /** What startSync returns for EXPRESS runs. */
  syncResult: (input: StartExecutionInput) => ExecutionSnapshot = (input) => ({
    executionArn: `${input.stateMachineArn}:${input.name}`,
    status: 'SUCCEEDED',
    output: { echo: input.input },
  });
  failStartWith?: Error;

  describeCalls = 0;
  /** DescribeExecution throws this (an engine the start's own check cannot reach either: as if the starter crashed). */
  failDescribeWith?: Error;
  /** StopExecution throws this. */
  failStopWith?: Error;
  /** Starts the execution, then throws: StartExecution accepted, its answer lost. */
  loseStartResponse = false;

  executionArnFor(stateMachineArn: string, name: string): string {
    return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
  }

  /** Runs inside start, before the execution exists (to race a cancel against a start). */
  beforeStart?: () => Promise<void>;

  async start(input: StartExecutionInput): Promise<{ executionArn: string }> {
    this.startCalls++;
    if (this.failStartWith) throw this.failStartWith;
    await this.beforeStart?.();
    const executionArn = this.executionArnFor(input.stateMachineArn, input.name);
    if (!this.executions.has(executionArn)) {
      this.executions.set(executionArn, { executionArn, status: 'RUNNING', input: input.input, stateMachineArn: input.stateMachineArn, startDate: new Date() });
    }
    if (this.loseStartResponse) throw new Error('socket hang up');
    return { executionArn };
  }

  /** How many executions were ever started. */
  get executionCount(): number {
    return this.executions.size;
  }

  /** Milliseconds startSync takes, to exercise the sync bound. */
  syncDelayMs = 0;

  async startSync(input: StartExecutionInput, signal?: AbortSignal): Promise<ExecutionSnapshot> {
    if (this.syncDelayMs > 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, this.syncDelayMs);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        });
      });
    }
    return this.syncResult(input);
  }

  async describe(executionArn: string): Promise<ExecutionSnapshot> {
    this.describeCalls++;
    if (this.failDescribeWith) throw this.failDescribeWith;
    const execution = this.executions.get(executionArn);
    if (!execution) throw new ExecutionNotFoundError(executionArn);
    return { ...execution };
  }

  async stop(executionArn: string, reason: { error: string; cause: string }): Promise<void> {
    this.stopCalls++;
    if (this.failStopWith) throw this.failStopWith;
    const execution = this.executions.get(executionArn);
    if (!execution) throw new ExecutionNotFoundError(executionArn);
    if (execution.status === 'RUNNING') Object.assign(execution, { status: 'ABORTED', error: reason.error, cause: reason.cause, stopDate: new Date() });
  }

  /** Every SendTaskSuccess/SendTaskFailure, in order. */
  readonly taskCalls: Array<{ taskToken: string; output?: unknown; failure?: { error: string; cause: string } }> = [];
  /** Tokens whose task no longer waits (answered, timed out): a second answer gets TaskGoneError. */
  readonly endedTasks = new Set<string>();
  /** Fails the next task call with this error (a transient API error). */
  failNextTaskCallWith?: Error;

  async sendTaskSuccess(taskToken: string, output: unknown): Promise<void> {
    this.#taskCall(taskToken);
    this.taskCalls.push({ taskToken, output });
  }

  async sendTaskFailure(taskToken: string, failure: { error: string; cause: string }): Promise<void> {
    this.#taskCall(taskToken);
    this.taskCalls.push({ taskToken, failure });
  }

  #taskCall(taskToken: string): void {
    const failure = this.failNextTaskCallWith;
    this.failNextTaskCallWith = undefined;
    if (failure) throw failure;
    if (this.endedTasks.has(taskToken)) throw new TaskGoneError();
    this.endedTasks.add(taskToken);
  }

  /** Finishes an execution the way Step Functions would. */
  finish(executionArn: string, result: Partial<ExecutionSnapshot> & Pick<ExecutionSnapshot, 'status'>): ExecutionSnapshot {
    const execution = this.executions.get(executionArn);
    if (!execution) throw new Error(`no execution ${executionArn}`);
    Object.assign(execution, { stopDate: new Date(), ...result });
    return { ...execution };
  }
}
