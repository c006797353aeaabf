/**
 * The key a question is pending under: the key of the question this ask stored already (asking
 * is idempotent), else the state's own key when it is free, a `-N` suffix when it is used, or a
 * minted one when the state names none.
 */
import { mintId } from './fingerprint.ts';
import type { OperationRecord, PendingInput } from './operation.ts';
import { timedOut } from './question-closing.ts';

/** What an ask says of itself that tells its own question apart (see AskInput in input-requests.ts). */
export interface Asking {
  taskToken: string;
  key?: string;
  concurrent?: boolean;
  state?: string;
  retried?: boolean;
}

/**
 * The question this ask already stored, by key: the pending one with its task token, else, for
 * a retried attempt of a state that runs alone, the open question that state stored under the
 * key it asks for (its failed attempt's token is void; nothing else of the execution runs, so
 * no other question can be that state's).
 */
export function ownQuestion(record: OperationRecord, input: Asking, now: number): [string, PendingInput] | undefined {
  const pending = Object.entries(record.pendingInputs ?? {});
  const same = pending.find(([, entry]) => entry.taskToken === input.taskToken);
  if (same || !input.retried || input.concurrent !== false || input.state === undefined) return same;
  const asked = pending.filter(
    ([key, entry]) =>
      entry.state === input.state && entry.concurrent === false && entry.answeringSince === undefined && !timedOut(entry, now) && askedAs(key, input.key),
  );
  return asked.sort(([, a], [, b]) => b.askedAt - a.askedAt)[0];
}

/** Whether `key` is one `freeKey` gives for `wanted`. */
function askedAs(key: string, wanted: string | undefined): boolean {
  if (wanted === undefined) return key.startsWith('input-');
  return key === wanted || (key.startsWith(`${wanted}-`) && /^\d+$/.test(key.slice(wanted.length + 1)));
}

/** The state's own key when it is free; a used one gets the first free `-N` suffix; none gets a minted key. */
export function freeKey(wanted: string | undefined, used: readonly string[]): string {
  if (wanted === undefined) return `input-${mintId()}`;
  if (!used.includes(wanted)) return wanted;
  for (let n = 2; ; n++) if (!used.includes(`${wanted}-${n}`)) return `${wanted}-${n}`;
}
