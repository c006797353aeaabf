/**
 * One WorkflowEngine over two: executions of state machines go to the Step Functions engine,
 * executions of durable functions to the durable one, told apart by the ARN's service.
 */
import type { ExecutionSnapshot, StartExecutionInput, WorkflowEngine } from '../operations/ports.ts';

/**
 * A durable callback id as the core hands it out as a task token. Step Functions task tokens
 * are opaque base64 and Lambda's callback ids are opaque too, so no shape tells them apart
 * reliably: the kind travels in the token, behind a prefix with a colon, which base64 never holds.
 */
export const DURABLE_TASK_TOKEN_PREFIX = 'durable-callback:';

/** The task token the core hands out for a durable execution's callback. */
export function durableTaskToken(callbackId: string): string {
  return `${DURABLE_TASK_TOKEN_PREFIX}${callbackId}`;
}

/** Whether `arn` names a Lambda function or one of its durable executions. */
export function isDurableArn(arn: string): boolean {
  return /^arn:[^:]+:lambda:/.test(arn);
}

export class RoutingWorkflowEngine implements WorkflowEngine {
  constructor(
    private readonly stepFunctions: WorkflowEngine,
    private readonly durable: WorkflowEngine,
  ) {}

  executionArnFor(arn: string, name: string): string {
    return this.engineFor(arn).executionArnFor(arn, name);
  }

  start(input: StartExecutionInput): Promise<{ executionArn: string }> {
    return this.engineFor(input.stateMachineArn).start(input);
  }

  startSync(input: StartExecutionInput, signal?: AbortSignal): Promise<ExecutionSnapshot> {
    return this.engineFor(input.stateMachineArn).startSync(input, signal);
  }

  describe(executionArn: string): Promise<ExecutionSnapshot> {
    return this.engineFor(executionArn).describe(executionArn);
  }

  stop(executionArn: string, reason: { error: string; cause: string }): Promise<void> {
    return this.engineFor(executionArn).stop(executionArn, reason);
  }

  sendTaskSuccess(taskToken: string, output: unknown): Promise<void> {
    const callbackId = callbackIdOf(taskToken);
    return callbackId === undefined ? this.stepFunctions.sendTaskSuccess(taskToken, output) : this.durable.sendTaskSuccess(callbackId, output);
  }

  sendTaskFailure(taskToken: string, failure: { error: string; cause: string }): Promise<void> {
    const callbackId = callbackIdOf(taskToken);
    return callbackId === undefined ? this.stepFunctions.sendTaskFailure(taskToken, failure) : this.durable.sendTaskFailure(callbackId, failure);
  }

  private engineFor(arn: string): WorkflowEngine {
    return isDurableArn(arn) ? this.durable : this.stepFunctions;
  }
}

function callbackIdOf(taskToken: string): string | undefined {
  return taskToken.startsWith(DURABLE_TASK_TOKEN_PREFIX) ? taskToken.slice(DURABLE_TASK_TOKEN_PREFIX.length) : undefined;
}
