/**
 * One invocation of a durable handler, as Lambda makes it: the event carries the execution's
 * ARN, a checkpoint token and its operations so far, with a client the SDK checkpoints
 * through; the context is a Lambda context with Lambda's 15 minutes. An error the handler
 * throws past the SDK is the invocation's, reported as Lambda reports an unhandled one.
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
} from '@aws/durable-execution-sdk-js';

/** What one invocation is given. */
export interface HandlerInvocation {
  durableExecutionArn: string;
  checkpointToken: string;
  operations: Operation[];
  /** The operations that changed since the last invocation (a wait's end, a callback's answer). */
  updatedOperationIds: string[];
}

/** The function the handler is served as. */
export interface InvokedFunction {
  handler: DurableLambdaHandler;
  transport: () => DurableExecutionApiClient;
  functionName: string;
  functionArn: string;
}

/** Invokes `fn.handler` once; resolves with its output, FAILED for an error it threw. */
export async function invokeHandler(fn: InvokedFunction, invocation: HandlerInvocation): Promise<DurableExecutionInvocationOutput> {
  const input = {
    DurableExecutionArn: invocation.durableExecutionArn,
    CheckpointToken: invocation.checkpointToken,
    InitialExecutionState: { Operations: invocation.operations, NextMarker: '' },
  };
  const event = new DurableExecutionInvocationInputWithClient(input, fn.transport());
  // The constructor keeps three fields; the service also says which operations changed.
  Object.assign(event, { UpdatedOperationIds: invocation.updatedOperationIds });
  try {
    return await fn.handler(event as unknown as DurableExecutionInvocationInput, lambdaContext(fn));
  } catch (error) {
    return { Status: 'FAILED', Error: errorObjectOf(error) } as DurableExecutionInvocationOutput;
  }
}

function lambdaContext(fn: InvokedFunction): Context {
  const unsupported = () => {
    throw new Error('not supported by the local durable service');
  };
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: fn.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: fn.functionArn,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${fn.functionName}`,
    logStreamName: 'local',
    // Lambda's 15 minutes: the SDK decides from it whether to wait in-process.
    getRemainingTimeInMillis: () => 900_000,
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

/** An error as Lambda's ErrorObject. */
export function errorObjectOf(error: unknown): ErrorObject {
  if (error instanceof Error) return { ErrorType: error.name, ErrorMessage: error.message, StackTrace: error.stack?.split('\n') };
  if (error && typeof error === 'object' && 'message' in error) return { ErrorType: 'Error', ErrorMessage: String(error.message) };
  return { ErrorType: 'Error', ErrorMessage: String(error) };
}
