/**
 * Compare-and-set updates of a record's side fields (questions, progress, log lines): read,
 * change, write on the condition that `updatedAt` is still what was read, and retry. Writers
 * that run at once (a Parallel state's branches, answers from two instances) never lose one
 * another's change, and no transaction is needed.
 */
import { isTerminal, type OperationChanges, type OperationKey, type OperationRecord, type OperationStatus, type RunReport } from './operation.ts';
import { OperationError } from './operation-error.ts';
import type { Clock, RecordStore } from './ports.ts';

const CAS_ATTEMPTS = 20;

/**
 * Applies `change` to the current record until a write wins. `change` returns undefined when
 * nothing should be written (the record is then returned as read, or undefined when absent).
 */
export async function updateRecord(
  store: RecordStore,
  clock: Clock,
  key: OperationKey,
  change: (record: OperationRecord, now: number) => OperationChanges | undefined,
): Promise<{ record: OperationRecord | undefined; written: boolean }> {
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
    const record = await store.get(key);
    if (!record) return { record: undefined, written: false };
    const now = nextUpdatedAt(clock, record);
    const changes = change(record, now);
    if (!changes) return { record, written: false };
    const updated = await store.transition(key, [record.status], { ...changes, updatedAt: now }, { ifUpdatedAt: record.updatedAt });
    if (updated) return { record: updated, written: true };
  }
  throw new OperationError('INTERNAL', 'The operation kept changing');
}

/** Strictly later than what was read, so every compare-and-set sees a change even within one millisecond. */
export function nextUpdatedAt(clock: Clock, record: OperationRecord): number {
  return Math.max(clock.now(), record.updatedAt + 1);
}

/**
 * Reports a terminal record keeps: the latest progress (status answers show it) and the few
 * made in the last moments, which a call waiting on the run (it reads at least once a
 * second) may not have streamed yet. Older ones only weigh on the record's 400 KB.
 */
export const TERMINAL_REPORT_WINDOW_MS = 5_000;
export const MAX_TERMINAL_REPORTS = 10;

export function terminalReports(reports: readonly RunReport[] | undefined, now: number): RunReport[] | undefined {
  if (!reports?.length) return undefined;
  const recent = reports.filter((report) => report.at >= now - TERMINAL_REPORT_WINDOW_MS).slice(-MAX_TERMINAL_REPORTS);
  const progress = reports.findLast((report) => report.kind === 'progress');
  const kept = progress && !recent.includes(progress) ? [progress, ...recent] : recent;
  return kept.length ? kept : undefined;
}

/**
 * A terminal transition from any of `from`: the record ends with its pending questions
 * cleared (nobody can answer them any more) and its reports trimmed (see `terminalReports`).
 * Trimming needs the record as it stands, so the write is a compare-and-set on `updatedAt`,
 * starting from `first` (the caller's read); it is `undefined` once another end has won.
 */
export async function endRecord(
  store: RecordStore,
  clock: Clock,
  first: OperationRecord,
  from: readonly OperationStatus[],
  changes: OperationChanges,
): Promise<OperationRecord | undefined> {
  const key: OperationKey = { ownerId: first.ownerId, token: first.token };
  let record: OperationRecord | undefined = first;
  for (let attempt = 0; attempt < CAS_ATTEMPTS && record; attempt++) {
    if (isTerminal(record.status) || !from.includes(record.status)) return undefined;
    const updatedAt = Math.max(changes.updatedAt ?? clock.now(), record.updatedAt + 1);
    const ended: OperationChanges = { ...changes, updatedAt, pendingInputs: undefined, reports: terminalReports(record.reports, updatedAt) };
    const updated = await store.transition(key, from, ended, { ifUpdatedAt: record.updatedAt });
    if (updated) return updated;
    record = await store.get(key);
  }
  if (record) throw new OperationError('INTERNAL', 'The operation kept changing');
  return undefined;
}
