/**
 * Callbacks the checkpoint worker timed out by its own timer: a change no call made, so each is
 * journaled as the update that sets it, in its place among the calls (the poll's reply comes
 * before the worker reads its next call), and a replay after a restart times it out again.
 */
import type { Operation, OperationUpdate } from '@aws/durable-execution-sdk-js';
import type { JournalEntry } from './checkpoint-journal.ts';

/** One operation of a PollCheckpointData reply: changed by the update, or by the worker itself when none. */
export interface PolledOperation {
  operation: Operation;
  update?: OperationUpdate;
}

/** The journal entries of the callbacks `polled` reports timed out, given the operations as first given out. */
export function callbackTimeoutEntries(polled: PolledOperation[], given: ReadonlyMap<string, Operation>, workerExecutionId: string): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const { operation, update } of polled) {
    if (operation.Type !== 'CALLBACK' || operation.Status !== 'TIMED_OUT' || update || !operation.Id) continue;
    if (given.get(operation.Id)?.Status === 'TIMED_OUT') continue; // a replayed timer firing again
    const operationData = { Status: operation.Status, CallbackDetails: operation.CallbackDetails };
    entries.push({ api: 'UpdateCheckpointData', params: { executionId: workerExecutionId, operationId: operation.Id, operationData } });
  }
  return entries;
}
