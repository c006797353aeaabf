/**
 * The WorkflowEngine port over Lambda durable executions: the only module that calls the
 * durable half of the Lambda API. The same client code talks to AWS and to local/durable/.
 */
import {
  CallbackTimeoutException,
  DurableExecutionAlreadyStartedException,
  type ErrorObject,
  GetDurableExecutionCommand,
  InvokeCommand,
  type LambdaClient,
  InvalidParameterValueException,
  ListDurableExecutionsByFunctionCommand,
  ResourceNotFoundException,
  SendDurableExecutionCallbackFailureCommand,
  SendDurableExecutionCallbackSuccessCommand,
  StopDurableExecutionCommand,
} from '@aws-sdk/client-lambda';
import {
  ExecutionNotFoundError,
  type ExecutionSnapshot,
  type ExecutionStatus,
  type StartExecutionInput,
  TaskGoneError,
  type WorkflowEngine,
} from '../operations/ports.ts';
import { parseJsonOrText } from '../shared/json-values.ts';
import { BY_NAME_SUFFIX, durableExecutionArnFor } from './durable-execution-arn.ts';

const STATUS_FOR: Record<string, ExecutionStatus> = {
  RUNNING: 'RUNNING',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  TIMED_OUT: 'TIMED_OUT',
  // Step Functions' word for a stopped execution is the one the core knows.
  STOPPED: 'ABORTED',
};

export class DurableFunctionEngine implements WorkflowEngine {
  constructor(private readonly client: LambdaClient) {}

  executionArnFor(functionArn: string, name: string): string {
    return durableExecutionArnFor(functionArn, name);
  }

  /** `stateMachineArn` is the qualified function ARN. Same name, same payload: the same execution. */
  async start(input: StartExecutionInput): Promise<{ executionArn: string }> {
    const command = new InvokeCommand({
      FunctionName: input.stateMachineArn,
      InvocationType: 'Event',
      DurableExecutionName: input.name,
      Payload: new TextEncoder().encode(JSON.stringify(input.input)),
    });
    try {
      const out = await this.client.send(command);
      if (out.DurableExecutionArn) return { executionArn: out.DurableExecutionArn };
      return { executionArn: await this.arnByName(input.stateMachineArn, input.name) };
    } catch (error) {
      // Same name, other payload: a retry of this very record whose arguments serialised in
      // another key order. The name is the record's, so is the execution.
      if (error instanceof DurableExecutionAlreadyStartedException) {
        return { executionArn: await this.arnByName(input.stateMachineArn, input.name) };
      }
      throw error;
    }
  }

  /**
   * Durable functions have no EXPRESS mode: a synchronous Invoke (RequestResponse, which
   * Lambda bounds at 15 minutes) under the same name, given up when `signal` aborts.
   */
  async startSync(input: StartExecutionInput, signal?: AbortSignal): Promise<ExecutionSnapshot> {
    const command = new InvokeCommand({
      FunctionName: input.stateMachineArn,
      InvocationType: 'RequestResponse',
      DurableExecutionName: input.name,
      Payload: new TextEncoder().encode(JSON.stringify(input.input)),
    });
    const out = await this.client.send(command, signal ? { abortSignal: signal } : {});
    const executionArn = out.DurableExecutionArn ?? (await this.arnByName(input.stateMachineArn, input.name));
    const payload = out.Payload ? new TextDecoder().decode(out.Payload) : '';
    if (!out.FunctionError) return { executionArn, status: 'SUCCEEDED', ...(payload === '' ? {} : { output: parseJsonOrText(payload) }) };
    const failure = (parseJsonOrText(payload) ?? {}) as { errorType?: unknown; errorMessage?: unknown };
    return {
      executionArn,
      status: 'FAILED',
      error: typeof failure.errorType === 'string' ? failure.errorType : out.FunctionError,
      cause: typeof failure.errorMessage === 'string' ? failure.errorMessage : payload,
    };
  }

  async describe(executionArn: string): Promise<ExecutionSnapshot> {
    try {
      const arn = await this.resolve(executionArn);
      const out = await this.client.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
      return {
        executionArn,
        status: STATUS_FOR[out.Status ?? ''] ?? 'RUNNING',
        ...(out.Result === undefined ? {} : { output: parseJsonOrText(out.Result) }),
        ...(out.Error?.ErrorType === undefined ? {} : { error: out.Error.ErrorType }),
        ...(out.Error?.ErrorMessage === undefined ? {} : { cause: out.Error.ErrorMessage }),
        ...(out.StartTimestamp ? { startDate: out.StartTimestamp } : {}),
        ...(out.EndTimestamp ? { stopDate: out.EndTimestamp } : {}),
        ...(out.InputPayload === undefined ? {} : { input: parseJsonOrText(out.InputPayload) }),
      };
    } catch (error) {
      if (error instanceof ResourceNotFoundException) throw new ExecutionNotFoundError(executionArn, { cause: error });
      throw error;
    }
  }

  /**
   * Lambda's model lists no conflict for stopping an execution that has ended (AWS's own testing
   * service answers it as stopped); should Lambda refuse one as an invalid parameter, an
   * execution that has ended is stopped all the same, as the port asks.
   */
  async stop(executionArn: string, reason: { error: string; cause: string }): Promise<void> {
    try {
      const arn = await this.resolve(executionArn);
      await this.client.send(new StopDurableExecutionCommand({ DurableExecutionArn: arn, Error: errorObject(reason) }));
    } catch (error) {
      if (error instanceof ResourceNotFoundException) throw new ExecutionNotFoundError(executionArn, { cause: error });
      if (error instanceof InvalidParameterValueException && (await this.describe(executionArn)).status !== 'RUNNING') return;
      throw error;
    }
  }

  /** `taskToken` is a durable callback id. */
  async sendTaskSuccess(taskToken: string, output: unknown): Promise<void> {
    const Result = new TextEncoder().encode(JSON.stringify(output));
    await callbackCall(() => this.client.send(new SendDurableExecutionCallbackSuccessCommand({ CallbackId: taskToken, Result })));
  }

  async sendTaskFailure(taskToken: string, failure: { error: string; cause: string }): Promise<void> {
    const command = new SendDurableExecutionCallbackFailureCommand({ CallbackId: taskToken, Error: errorObject(failure) });
    await callbackCall(() => this.client.send(command));
  }

  /** The assigned ARN an `executionArnFor` ARN stands for; any other ARN as it is. */
  private async resolve(executionArn: string): Promise<string> {
    if (!executionArn.endsWith(BY_NAME_SUFFIX)) return executionArn;
    const [functionArn = '', rest = ''] = executionArn.split('/durable-execution/');
    return this.arnByName(functionArn, rest.slice(0, -BY_NAME_SUFFIX.length));
  }

  /**
   * The ARN of the function's execution named `name` (an Invoke that did not say it). Listed on
   * the unqualified function: an alias's execution runs under the version the alias pointed to
   * at its start, which the alias may no longer name.
   */
  private async arnByName(functionArn: string, name: string): Promise<string> {
    const FunctionName = unqualified(functionArn);
    const out = await this.client.send(new ListDurableExecutionsByFunctionCommand({ FunctionName, DurableExecutionName: name }));
    const arn = out.DurableExecutions?.find((execution) => execution.DurableExecutionName === name)?.DurableExecutionArn;
    if (!arn) throw new ExecutionNotFoundError(`${functionArn}/durable-execution/${name}`);
    return arn;
  }
}

/** `arn:…:function:<name>` without its `:<version or alias>`. */
function unqualified(functionArn: string): string {
  return functionArn.replace(/^(arn:[^:]+:lambda:[^:]+:[^:]+:function:[^:]+):[^:]+$/, '$1');
}

function errorObject(reason: { error: string; cause: string }): ErrorObject {
  return { ErrorType: reason.error, ErrorMessage: reason.cause };
}

/**
 * A callback that no longer waits is TaskGoneError, as TaskTimedOut is for a task token:
 * Lambda answers CallbackTimeoutException for one that "has either expired or ... has already
 * been closed" (answered, timed out, its execution over), ResourceNotFoundException for an id
 * it does not know.
 */
async function callbackCall(send: () => Promise<unknown>): Promise<void> {
  try {
    await send();
  } catch (error) {
    if (error instanceof CallbackTimeoutException || error instanceof ResourceNotFoundException) throw new TaskGoneError({ cause: error });
    throw error;
  }
}
