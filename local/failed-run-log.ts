/**
 * The local console's line for a run that ended badly: in AWS the execution's history shows
 * it, but `npm start` has no console for Step Functions, so a failed run would go unseen by
 * the server's author. Tool, operation id, error and cause only: the input and output (the
 * arguments, the results) never reach the console.
 */
import type { ExecutionStatusChangeEvent } from './stepfunctions/sfn-facade.ts';

const ENDINGS: Partial<Record<ExecutionStatusChangeEvent['detail']['status'], string>> = {
  FAILED: 'Run failed',
  TIMED_OUT: 'Run timed out',
};

/** Whether `detail` is the end of a run that failed or timed out (a cancel is the caller's own doing). */
export function endedBadly(detail: ExecutionStatusChangeEvent['detail']): boolean {
  return ENDINGS[detail.status] !== undefined;
}

/** The operation id its caller holds (the token or task id), from the execution's input envelope; only that field is read. */
export function operationIdOf(detail: ExecutionStatusChangeEvent['detail']): string | undefined {
  try {
    const token = (JSON.parse(detail.input ?? 'null') as { operation?: { token?: unknown } } | null)?.operation?.token;
    return typeof token === 'string' ? token : undefined;
  } catch {
    return undefined;
  }
}

/** The line for a run that `endedBadly`; without an operation id, the run was a synchronous call, named by its execution. */
export function failedRunLine(detail: ExecutionStatusChangeEvent['detail'], operationId: string | undefined): string {
  const ending = ENDINGS[detail.status] ?? `Run ended ${detail.status}`;
  const tool = detail.stateMachineArn.split(':').at(-1) ?? detail.stateMachineArn;
  const error = detail.error ?? (detail.status === 'TIMED_OUT' ? 'States.Timeout' : 'an unnamed error');
  return `${ending}: tool ${tool}, ${operationId ? `operation ${operationId}` : `synchronous call (execution ${detail.name})`}: ${error}${detail.cause ? `: ${detail.cause}` : ''}`;
}
