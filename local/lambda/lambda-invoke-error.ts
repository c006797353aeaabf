/**
 * A failed invocation of a local function, carrying the payload the Node.js runtime returns for
 * it (`{ errorType, errorMessage, trace }`), as Invoke returns it with `X-Amz-Function-Error`.
 * Step Functions turns it into Error = errorType, Cause = the payload as JSON.
 */
import type { LambdaErrorPayload } from '../stepfunctions/lambda-function-error.ts';

export type { LambdaErrorPayload };

/** The runtime's error for a function that threw, timed out, or failed its init. */
export class LambdaFunctionError extends Error {
  readonly payload: LambdaErrorPayload;

  constructor(payload: LambdaErrorPayload) {
    super(payload.errorMessage);
    this.name = payload.errorType;
    this.payload = payload;
    // The function's own stack, so lambdaErrorPayload (what the Step Functions facade reports) gives back this payload.
    if (payload.trace && payload.trace.length > 0) this.stack = payload.trace.join('\n');
    else delete (this as { stack?: string }).stack;
  }
}

/** Lambda's error when an invocation runs past the function's Timeout. */
export function timeoutError(requestId: string, timeoutSeconds: number): LambdaFunctionError {
  return new LambdaFunctionError({
    errorType: 'Sandbox.Timedout',
    errorMessage: `RequestId: ${requestId} Error: Task timed out after ${timeoutSeconds.toFixed(2)} seconds`,
  });
}

/** Lambda's error when the runtime process dies mid-invocation (out of memory, process.exit). */
export function exitError(requestId: string, detail: string): LambdaFunctionError {
  return new LambdaFunctionError({ errorType: 'Runtime.ExitError', errorMessage: `RequestId: ${requestId} Error: Runtime exited with error: ${detail}` });
}
