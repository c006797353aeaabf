/**
 * When a running record is checked against its execution (one DescribeExecution). Status-sync
 * keeps records current, so a reconcile only catches a lost event; DescribeExecution comes
 * out of an account-wide budget (about 15/s), so its cadence backs off as an operation ages:
 * the base interval for the first minutes, then doubling up to a ceiling. A day-long polled
 * operation then costs about a hundred calls instead of one a minute.
 */
import { isTerminal, type OperationRecord } from './operation.ts';
import type { OperationsLimits } from './operations-limits.ts';

/** Operations younger than this are reconciled at the base interval. */
export const RECONCILE_BACKOFF_AFTER_MS = 10 * 60_000;
/** The interval doubles this often once the backoff has begun. */
const RECONCILE_DOUBLING_MS = 10 * 60_000;
/** The longest interval between two reconciles of one running operation. */
export const RECONCILE_MAX_INTERVAL_MS = 15 * 60_000;

/**
 * The interval between reconciles of a running record of age `ageMs`: the base (the
 * record's poll interval or the server's floor, whichever is longer) for the first ten
 * minutes, then doubling every ten minutes up to fifteen minutes (never below the base).
 */
export function reconcileIntervalMs(
  record: Pick<OperationRecord, 'pollIntervalSeconds'>,
  ageMs: number,
  limits: Pick<OperationsLimits, 'reconcileAfterSeconds'>,
): number {
  const baseMs = Math.max(record.pollIntervalSeconds, limits.reconcileAfterSeconds) * 1000;
  if (ageMs < RECONCILE_BACKOFF_AFTER_MS) return baseMs;
  const doublings = Math.floor((ageMs - RECONCILE_BACKOFF_AFTER_MS) / RECONCILE_DOUBLING_MS) + 1;
  return Math.max(baseMs, Math.min(RECONCILE_MAX_INTERVAL_MS, baseMs * 2 ** doublings));
}

/**
 * Whether a read at `now` should check the record against its execution. Never for a
 * terminal record, nor for one waiting on questions that are all within their deadlines
 * (the execution waits on them, and a state that timed out reports no event, so the
 * deadline is when to look again). Otherwise once the backoff interval has passed since the
 * record was last written.
 */
export function needsReconcile(record: OperationRecord, now: number, limits: Pick<OperationsLimits, 'reconcileAfterSeconds'>): boolean {
  if (isTerminal(record.status)) return false;
  if (record.status === 'input_required' && questionsWithinDeadline(record, now)) return false;
  return now - record.updatedAt >= reconcileIntervalMs(record, now - record.createdAt, limits);
}

/** Every pending question has a deadline, and none has passed. Questions without one leave it to the backoff. */
function questionsWithinDeadline(record: OperationRecord, now: number): boolean {
  const pending = Object.values(record.pendingInputs ?? {});
  if (pending.length === 0) return false;
  return pending.every((entry) => {
    const deadline = (entry as { deadline?: number }).deadline;
    return deadline !== undefined && deadline > now;
  });
}
