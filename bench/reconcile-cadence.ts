/**
 * DescribeExecution calls per hour for many polled long operations: the real reconcile
 * decision (lambdas/operations/reconcile-cadence.ts) driven over a simulated clock. Each
 * operation is polled at its poll interval for its whole run; a poll that the decision lets
 * through costs one DescribeExecution and rewrites `updatedAt`, as the core's
 * compare-and-set does (status-sync never writes: the worst case, every event of a
 * running execution lost or none sent). Compared with the fixed one-minute cadence.
 */
import { DEFAULT_LIMITS, type OperationsLimits } from '../lambdas/operations/operations-limits.ts';
import type { OperationRecord } from '../lambdas/operations/operation.ts';
import { needsReconcile } from '../lambdas/operations/reconcile-cadence.ts';

export interface CadenceRun {
  operations: number;
  hours: number;
  pollSeconds: number;
  /** DescribeExecution calls in each hour of the run, all operations together. */
  perHour: number[];
  /** The mean per hour with a fixed interval of `reconcileAfterSeconds` (the cadence before the backoff). */
  fixedPerHour: number;
}

/** Simulates `operations` operations started `spreadSeconds` apart, each polled every `pollSeconds` for `hours`. */
export function simulateReconcileCadence(options: { operations?: number; hours?: number; pollSeconds?: number; limits?: OperationsLimits } = {}): CadenceRun {
  const { operations = 1000, hours = 24, pollSeconds = 5, limits = DEFAULT_LIMITS } = options;
  const perHour = new Array<number>(hours).fill(0);
  const runMs = hours * 3_600_000;
  // Every operation is like every other: one is simulated and counted `operations` times.
  const record = { status: 'working', createdAt: 0, updatedAt: 0, pollIntervalSeconds: pollSeconds } as OperationRecord;
  for (let now = 0; now < runMs; now += pollSeconds * 1000) {
    if (!needsReconcile(record, now, limits)) continue;
    record.updatedAt = now;
    const hour = Math.floor(now / 3_600_000);
    perHour[hour] = (perHour[hour] ?? 0) + operations;
  }
  const fixedIntervalMs = Math.max(pollSeconds, limits.reconcileAfterSeconds) * 1000;
  let fixedTotal = 0;
  for (let now = 0, updatedAt = 0; now < runMs; now += pollSeconds * 1000) {
    if (now - updatedAt < fixedIntervalMs) continue;
    updatedAt = now;
    fixedTotal += operations;
  }
  const fixedPerHour = Math.round(fixedTotal / hours);
  return { operations, hours, pollSeconds, perHour, fixedPerHour };
}

/** Prints the figure: calls per hour (first hour, each later hour, the day's mean) and per second against the account's budget. */
export function printReconcileCadence(run: CadenceRun = simulateReconcileCadence()): void {
  const total = run.perHour.reduce((a, b) => a + b, 0);
  const mean = total / run.hours;
  const later = run.perHour.slice(1);
  console.log(`reconcile cadence: DescribeExecution for ${run.operations} day-long operations, each polled every ${run.pollSeconds} s, no status events`);
  console.log(`  ${'first hour'.padEnd(44)} ${String(run.perHour[0]).padStart(8)} calls/h (${((run.perHour[0] ?? 0) / 3600).toFixed(2)}/s)`);
  console.log(`  ${'each later hour'.padEnd(44)} ${String(Math.max(...later)).padStart(8)} calls/h (${(Math.max(...later) / 3600).toFixed(2)}/s)`);
  console.log(`  ${`mean over ${run.hours} h`.padEnd(44)} ${mean.toFixed(0).padStart(8)} calls/h (${(mean / 3600).toFixed(2)}/s of the account's ~15/s)`);
  console.log(
    `  ${'mean with a fixed one-minute cadence'.padEnd(44)} ${String(run.fixedPerHour).padStart(8)} calls/h (${(run.fixedPerHour / 3600).toFixed(2)}/s)`,
  );
}
