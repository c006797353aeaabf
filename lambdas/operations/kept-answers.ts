/**
 * Answers kept for a retried ask. A question whose event could not be handed on is visible,
 * yet its attempt failed (`Mcp.AskFailed`) and the state retries under a new task token; an
 * answer given in between reaches the failed attempt's token, whose state no longer waits. The
 * answer is kept on the question, and the retried attempt, taking the question over, is
 * resumed with it instead of asking again.
 */
import type { Delivery } from './input-protocol.ts';
import { isTerminal, type OperationChanges, type OperationRecord, type PendingInput } from './operation.ts';
import { sameJson } from './question-keys.ts';

/**
 * The change that keeps `delivery` on the question at `inputKey`, whose task token no longer
 * resumes its state; undefined when the operation is over or the question gone. Only a
 * question a state asked by name can be asked again by its retry. A retry that took the
 * question over while the answer was on its way has put its own token there.
 */
export function keepAnswer(record: OperationRecord, inputKey: string, delivery: Delivery): OperationChanges | undefined {
  const entry = record.pendingInputs?.[inputKey];
  if (isTerminal(record.status) || entry?.state === undefined) return undefined;
  const { answeringSince: _delivered, ...question } = entry;
  return { pendingInputs: { ...record.pendingInputs, [inputKey]: { ...question, keptAnswer: delivery } } };
}

/** Whether `entry` keeps an answer to another question than `request`: a retry asking anew is asked anew. */
export function keptForAnother(entry: PendingInput, request: unknown): boolean {
  return entry.keptAnswer !== undefined && !sameJson(entry.request, request);
}
