/**
 * The key a question is pending under: the key of the question this ask stored already (asking
 * is idempotent), else the state's own key when it is free, a `-N` suffix when it is used, or a
 * minted one when the state names none.
 */
import { isDeepStrictEqual } from 'node:util';
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
  enteredAt?: number;
  /** The question as the protocol parsed it. */
  request?: unknown;
}

/**
 * The question this ask already stored, by key: the pending one with its task token, else, for
 * a retried attempt (its failed attempt's token is void), the open question its state stored
 * under the key it asks for, even one being answered (the answer reaches this attempt). A state that runs alone owns the latest such question (nothing
 * else of the execution runs). In a Parallel branch or a Map iteration, the state name tells
 * branches apart (names are unique in a machine), and the entry time, which a retry keeps, and
 * the question tell iterations apart.
 */
export function ownQuestion(record: OperationRecord, input: Asking, now: number): [string, PendingInput] | undefined {
  const pending = Object.entries(record.pendingInputs ?? {});
  const same = pending.find(([, entry]) => entry.taskToken === input.taskToken);
  if (same || !input.retried || input.state === undefined) return same;
  const asked = pending.filter(([key, entry]) => entry.state === input.state && !timedOut(entry, now) && askedAs(key, input.key));
  if (input.concurrent === false) return asked.filter(([, entry]) => entry.concurrent === false).sort(([, a], [, b]) => b.askedAt - a.askedAt)[0];
  return sameAttempt(asked, input);
}

/**
 * Among the questions of one state inside a Parallel or Map, the one asked by the attempt this
 * one retries: entered when this one was, asking the same. Iterations can enter in the same
 * millisecond: when two such questions are open, none is taken, since taking another
 * iteration's would leave that iteration waiting for an answer that never reaches it.
 */
function sameAttempt(asked: Array<[string, PendingInput]>, input: Asking): [string, PendingInput] | undefined {
  if (input.enteredAt === undefined) return undefined;
  const same = asked.filter(([, entry]) => entry.concurrent !== false && entry.enteredAt === input.enteredAt && sameJson(entry.request, input.request));
  return same.length === 1 ? same[0] : undefined;
}

/** Whether two JSON values are equal (a stored question has been through JSON). */
export function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a ?? null)), JSON.parse(JSON.stringify(b ?? null)));
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
