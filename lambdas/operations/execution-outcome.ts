/**
 * Maps a Step Functions execution snapshot onto the operation lifecycle (DESIGN §3):
 * SUCCEEDED is a result, FAILED/TIMED_OUT a tool failure, ABORTED a cancellation,
 * and a Fail state with Error `Mcp.ProtocolError` a deliberate protocol error.
 */
import type { OperationChanges, OperationStatus, Outcome } from './operation.ts';
import type { ExecutionSnapshot } from './ports.ts';
import { isObject, jsonDepthExceeds } from '../shared/json-values.ts';

export const PROTOCOL_ERROR_NAME = 'Mcp.ProtocolError';

/** The status an execution maps to; `undefined` while it is still running. */
export function terminalStatusOf(snapshot: ExecutionSnapshot): OperationStatus | undefined {
  switch (snapshot.status) {
    case 'SUCCEEDED':
      return 'completed';
    case 'FAILED':
    case 'TIMED_OUT':
      return 'failed';
    case 'ABORTED':
      return 'canceled';
    default:
      return undefined;
  }
}

/**
 * Deepest output (or protocol-error data) kept: far past any real tool result, and far
 * short of what would overflow the stack when the record is written.
 */
export const MAX_OUTPUT_DEPTH = 256;

export function outcomeOf(snapshot: ExecutionSnapshot): Outcome | undefined {
  const outcome = rawOutcomeOf(snapshot);
  const nested = outcome?.kind === 'result' ? outcome.output : outcome?.kind === 'protocol-error' ? outcome.data : undefined;
  if (jsonDepthExceeds(nested, MAX_OUTPUT_DEPTH)) {
    return { kind: 'internal-error', message: `The tool result nests deeper than ${MAX_OUTPUT_DEPTH} levels, more than the server keeps` };
  }
  return outcome;
}

function rawOutcomeOf(snapshot: ExecutionSnapshot): Outcome | undefined {
  switch (snapshot.status) {
    case 'SUCCEEDED':
      return { kind: 'result', output: snapshot.output ?? null };
    case 'TIMED_OUT':
      return { kind: 'tool-error', error: snapshot.error ?? 'States.Timeout', cause: snapshot.cause ?? 'The execution timed out' };
    case 'FAILED':
      if (snapshot.error === PROTOCOL_ERROR_NAME) return protocolErrorFromCause(snapshot.cause);
      return { kind: 'tool-error', error: snapshot.error ?? 'States.Failed', ...(snapshot.cause === undefined ? {} : { cause: withoutTrace(snapshot.cause) }) };
    default:
      return undefined;
  }
}

/** The Cause of an `Mcp.ProtocolError` Fail state is JSON `{ code, message, data? }`. */
function protocolErrorFromCause(cause: string | undefined): Outcome {
  try {
    const parsed = JSON.parse(cause ?? '') as { code?: unknown; message?: unknown; data?: unknown };
    if (Number.isInteger(parsed.code) && typeof parsed.message === 'string') {
      return { kind: 'protocol-error', code: parsed.code as number, message: parsed.message, ...('data' in parsed ? { data: parsed.data } : {}) };
    }
  } catch {
    // Falls through to the internal error below.
  }
  return { kind: 'internal-error', message: `The state machine raised ${PROTOCOL_ERROR_NAME} without a JSON { code, message } cause` };
}

/**
 * A Lambda worker's Cause is JSON `{ errorType, errorMessage, trace }`, and in AWS the
 * trace holds source paths. Only the type and message are kept: nothing internal is
 * stored, so nothing internal can reach a client. Other causes are kept as written.
 */
export function withoutTrace(cause: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(cause);
  } catch {
    return cause;
  }
  if (!isObject(parsed) || (typeof parsed.errorMessage !== 'string' && typeof parsed.errorType !== 'string')) return cause;
  const { errorType, errorMessage } = parsed;
  return JSON.stringify({
    ...(typeof errorType === 'string' ? { errorType } : {}),
    ...(typeof errorMessage === 'string' ? { errorMessage } : {}),
  });
}

/** The record changes for a finished execution, or `undefined` while it runs. */
export function terminalChanges(snapshot: ExecutionSnapshot, keepAliveSeconds: number | null, now: number): OperationChanges | undefined {
  const terminal = terminalStatusOf(snapshot);
  if (!terminal) return undefined;
  const completedAt = snapshot.stopDate?.getTime() ?? now;
  const outcome = outcomeOf(snapshot);
  // A result the server cannot keep is our failure, whatever the execution says.
  const status = outcome?.kind === 'internal-error' ? 'failed' : terminal;
  return {
    status,
    statusMessage: statusMessageFor(status, outcome),
    executionArn: snapshot.executionArn,
    updatedAt: now,
    completedAt,
    // Learned late (a replayed event, a reconcile): kept keepAlive from now, never already expired.
    ...expiryFor(Math.max(completedAt, now), keepAliveSeconds),
    ...(outcome ? { outcome } : {}),
  };
}

/**
 * `expiresAt` (epoch seconds) for a result kept `keepAliveSeconds` after completion. When
 * unlimited, the running expiry is removed (`undefined` clears the attribute).
 */
export function expiryFor(completedAt: number, keepAliveSeconds: number | null): { expiresAt: number | undefined } {
  return { expiresAt: keepAliveSeconds === null ? undefined : Math.ceil(completedAt / 1000) + keepAliveSeconds };
}

/**
 * `expiresAt` (epoch seconds) for a record not yet terminal: no execution outlives its
 * longest run, and its result is kept `keepAliveSeconds` after that. So a record whose
 * start crashed, or whose events were all lost, still expires.
 */
export function runningExpiry(createdAt: number, maxRunSeconds: number, keepAliveSeconds: number): number {
  return Math.ceil(createdAt / 1000) + maxRunSeconds + keepAliveSeconds;
}

export function statusMessageFor(status: OperationStatus, outcome?: Outcome): string {
  switch (status) {
    case 'submitted':
      return 'The operation was accepted and is starting.';
    case 'working':
      return 'The operation is running.';
    case 'input_required':
      return 'The operation is waiting for input.';
    case 'completed':
      return 'The operation completed; its result is ready.';
    case 'canceled':
      return 'The operation was canceled.';
    case 'failed':
      if (outcome?.kind === 'tool-error') return `The operation failed: ${outcome.error}`;
      if (outcome?.kind === 'protocol-error' || outcome?.kind === 'internal-error') return `The operation failed: ${outcome.message}`;
      return 'The operation failed.';
  }
}
