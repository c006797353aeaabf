/**
 * How an execution's checkpoints outlive a restart. The testing package's checkpoint worker
 * cannot be seeded with operations: it builds them only from the calls that change them. So
 * the service journals those calls, in the order the worker applied them, and after a restart
 * replays them into a fresh worker under the same execution id. The callback ids handed out
 * before the restart then still resolve, since the worker reads the execution and operation
 * from the id itself.
 *
 * A replay stamps its operations anew (start times, a wait's end, a retry's next attempt, a new
 * callback id); the service keeps the values it first gave out and gives those to the SDK, so
 * a wait still ends when it was due and a callback keeps its id. Answers to a callback go to
 * the worker under the callback's current id: the worker's timeout timers are kept by id, and
 * an answer under the old one would leave the new one's timers to time the callback out.
 */
import type { Operation } from '@aws/durable-execution-sdk-js';
import type { CheckpointApi, CheckpointWorkerClient } from './checkpoint-worker-client.ts';

/** The worker calls that change an execution's operations. */
export type JournaledApi = Extract<
  CheckpointApi,
  'CheckpointDurableExecutionState' | 'UpdateCheckpointData' | 'SendDurableExecutionCallbackSuccess' | 'SendDurableExecutionCallbackFailure'
>;

/** One applied call, with the parameters the worker was given. */
export interface JournalEntry {
  api: JournaledApi;
  params: Record<string, unknown>;
}

/**
 * Replays `journal` into `worker`, where the execution has just been started again; every
 * entry queues checkpoint updates, which the caller drains without acting on them.
 */
export async function replayJournal(worker: CheckpointWorkerClient, executionId: string, journal: JournalEntry[]): Promise<void> {
  for (const entry of journal) {
    let params = entry.params;
    if (entry.api === 'SendDurableExecutionCallbackSuccess' || entry.api === 'SendDurableExecutionCallbackFailure') {
      const callbackIds = currentCallbackIds(await worker.call<{ Operations: Operation[] }>('GetDurableExecutionState', { DurableExecutionArn: executionId }));
      const operationId = callbackIdParts(String(params.CallbackId))?.operationId ?? '';
      params = { ...params, CallbackId: callbackIds.get(operationId) ?? params.CallbackId };
    }
    await worker.call(entry.api, params);
  }
}

/** The callback id the worker holds for each callback operation, by operation id. */
export function currentCallbackIds(state: { Operations?: Operation[] }): Map<string, string> {
  const ids = new Map<string, string>();
  for (const operation of state.Operations ?? []) {
    if (operation.Type === 'CALLBACK' && operation.Id && operation.CallbackDetails?.CallbackId) ids.set(operation.Id, operation.CallbackDetails.CallbackId);
  }
  return ids;
}

/** The checkpoint worker's callback ids are base64 JSON naming the execution and the operation. */
export function callbackIdParts(callbackId: string): { executionId: string; operationId: string } | undefined {
  try {
    const decoded = JSON.parse(Buffer.from(callbackId, 'base64').toString('utf8')) as { executionId?: unknown; operationId?: unknown };
    if (typeof decoded.executionId !== 'string' || typeof decoded.operationId !== 'string') return undefined;
    return { executionId: decoded.executionId, operationId: decoded.operationId };
  } catch {
    return undefined;
  }
}

/** The key an operation is kept under: the execution's own operation gets a new id on a replay. */
export function operationKey(operation: Operation): string {
  return operation.Type === 'EXECUTION' ? '$execution' : (operation.Id ?? '');
}

/**
 * `operation` as the service first gave it out (`earlier`): the times and the callback id a
 * replay stamps anew are taken from `earlier` where it describes the same state.
 */
export function asFirstGiven(operation: Operation, earlier: Operation | undefined): Operation {
  if (!earlier) return operation;
  const given: Operation = { ...operation, Id: operation.Id, StartTimestamp: earlier.StartTimestamp ?? operation.StartTimestamp };
  if (earlier.Status === operation.Status && earlier.EndTimestamp) given.EndTimestamp = earlier.EndTimestamp;
  if (operation.WaitDetails && earlier.WaitDetails?.ScheduledEndTimestamp) {
    given.WaitDetails = { ...operation.WaitDetails, ScheduledEndTimestamp: earlier.WaitDetails.ScheduledEndTimestamp };
  }
  if (operation.StepDetails && earlier.StepDetails?.NextAttemptTimestamp && earlier.StepDetails.Attempt === operation.StepDetails.Attempt) {
    given.StepDetails = { ...operation.StepDetails, NextAttemptTimestamp: earlier.StepDetails.NextAttemptTimestamp };
  }
  if (operation.CallbackDetails && earlier.CallbackDetails?.CallbackId) {
    given.CallbackDetails = { ...operation.CallbackDetails, CallbackId: earlier.CallbackDetails.CallbackId };
  }
  return given;
}
