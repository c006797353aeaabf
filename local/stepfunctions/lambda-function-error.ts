/**
 * What Step Functions makes of a worker that throws, in the shape AWS gives it: the Node.js
 * Lambda runtime turns the thrown value into `{ errorType, errorMessage, trace }` (the
 * runtime interface client's `toRapidResponse`, `trace` being the stack split into lines,
 * with source-mapped paths under `--enable-source-maps`), and the Task fails with
 * Error = errorType and Cause = that JSON. This holds for a `${Worker_x}` resource and for
 * `arn:aws:states:::lambda:invoke` alike. Keeping `trace` locally lets a local test catch a
 * stack trace that would reach a client in AWS.
 */
import { types } from 'node:util';
import { TaskError } from './sfn-facade-errors.ts';

/** The Node.js runtime's error response (the Invoke payload of a function error). */
export interface LambdaErrorPayload {
  errorType: string;
  errorMessage: string;
  /** The stack, one line each; absent for an error without a stack. */
  trace?: string[];
}

/** The Task failure for a worker that threw `thrown`: Error = errorType, Cause = the payload as JSON. */
export function lambdaFunctionError(thrown: unknown): TaskError {
  const payload = lambdaErrorPayload(thrown);
  return new TaskError(payload.errorType, JSON.stringify(payload));
}

/** The runtime's rules: an Error (or look-alike) gives name, message and stack lines; anything else its type and text. */
export function lambdaErrorPayload(thrown: unknown): LambdaErrorPayload {
  if (types.isNativeError(thrown) || looksLikeError(thrown)) {
    const error = thrown as Error;
    return {
      errorType: escapeDelete(error.name) || 'Error',
      errorMessage: escapeDelete(error.message),
      ...(typeof error.stack === 'string' ? { trace: escapeDelete(error.stack).split('\n') } : {}),
    };
  }
  return { errorType: typeof thrown, errorMessage: String(thrown), trace: [] };
}

function looksLikeError(value: unknown): boolean {
  const candidate = value as Partial<Record<'name' | 'message' | 'stack', unknown>> | null | undefined;
  return (
    typeof candidate?.name === 'string' &&
    candidate.name !== '' &&
    typeof candidate.message === 'string' &&
    candidate.message !== '' &&
    typeof candidate.stack === 'string' &&
    candidate.stack !== ''
  );
}

/** The runtime writes DEL (0x7F) as `%7F`. */
function escapeDelete(text: string | undefined): string {
  return (text ?? '').replace(/\x7F/g, '%7F');
}
