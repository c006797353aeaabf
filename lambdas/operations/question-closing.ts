/**
 * When a question closes without its answer, and what that leaves on the record: a question
 * past its deadline has timed out, one whose state stopped waiting has ended, and the last one
 * to go sends the operation back to `working`. Pure functions of the record (input-requests.ts
 * writes what they return).
 */
import { isTerminal, type ClosedInput, type OperationChanges, type OperationRecord, type PendingInput } from './operation.ts';

/** Why an answer came too late. */
export type LateReason = Exclude<ClosedInput['reason'], 'answered'>;

/** Whether the question's state has stopped waiting by `now` (Step Functions sends no event when it times out). */
export function timedOut(entry: PendingInput, now: number): boolean {
  return entry.deadline !== undefined && entry.deadline <= now;
}

/** The changes that leave `open` pending; with none, the operation is back to `working`. */
export function pendingChanges(record: OperationRecord, open: Record<string, PendingInput>): OperationChanges {
  const empty = Object.keys(open).length === 0;
  return {
    pendingInputs: empty ? undefined : open,
    ...(empty && record.status === 'input_required' ? { status: 'working' as const, statusMessage: 'The operation is running' } : {}),
  };
}

/** Splits the pending questions: those `closes` picks are closed (`closed` is the new closedInputs, undefined when none is). */
export function closeWhere(record: OperationRecord, now: number, closes: (entry: PendingInput, key: string) => boolean) {
  const open: Record<string, PendingInput> = {};
  let closed: Record<string, ClosedInput> | undefined;
  for (const [key, entry] of Object.entries(record.pendingInputs ?? {})) {
    if (!closes(entry, key)) {
      open[key] = entry;
      continue;
    }
    closed ??= { ...record.closedInputs };
    closed[key] = { reason: timedOut(entry, now) ? 'timed-out' : 'ended', at: now };
  }
  return { open, closed };
}

/**
 * Why an answer to `key` comes too late, when it does: its question closed, timed out, or
 * was still waiting when the operation ended. Undefined for a key answered already (or being
 * answered) or never asked.
 */
export function closedReason(record: OperationRecord, key: string, now: number): LateReason | undefined {
  const closed = record.closedInputs?.[key];
  if (closed) return closed.reason === 'answered' ? undefined : closed.reason;
  const entry = record.pendingInputs?.[key];
  if (entry && timedOut(entry, now)) return 'timed-out';
  // Asked, never answered, and the run is over (its questions may have been cleared as it ended).
  return isTerminal(record.status) && (entry !== undefined || (record.usedInputKeys ?? []).includes(key)) ? 'ended' : undefined;
}
