/**
 * Compare-and-set updates of a record's side fields (questions, progress, log lines): read,
 * change, write on the condition that `updatedAt` is still what was read, and retry. Writers
 * that run at once (a Parallel state's branches, answers from two instances) never lose one
 * another's change, and no transaction is needed.
 */
import type { OperationChanges, OperationKey, OperationRecord } from './operation.ts';
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
