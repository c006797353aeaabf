/**
 * One fuzz case: what is posted, as whom, and which argument values it carries (the
 * oracle checks none of them reaches a log). Generators build a mutable draft; the case
 * is its final text.
 */
import type { SeededRandom } from './seeded-random.ts';
import type { KnownIds } from './fuzz-target.ts';

export interface FuzzCase {
  /** The template and mutations that made it, e.g. `legacy tools/call task + wrong-type params.task`. */
  label: string;
  principal: string;
  headers: Record<string, string>;
  body: string;
  /** Argument string values: none may appear in a log line. */
  markers: string[];
}

/** A case under construction. */
export interface Draft {
  label: string;
  principal: string;
  headers: Record<string, string>;
  /** The JSON-RPC message (or batch); mutations change it in place. */
  message: unknown;
  /** Set by text-level mutations: the body as it is sent, instead of the message's JSON. */
  text?: string;
  /**
   * Raw JSON tokens JSON cannot produce (1e309, -0, 10,000 nested arrays): the message holds
   * the sentinel string, which is replaced by the token in the text.
   */
  raw: Array<[sentinel: string, token: string]>;
  markers: string[];
}

/** What the generators know: the seeded ids, and a source of fresh markers. */
export interface GenerationContext {
  rng: SeededRandom;
  known: KnownIds;
  /** A fresh argument marker (lower-case letters and digits, never in any server text). */
  marker(): string;
}

/** Argument markers: `mk` and 12 hex digits, a shape no server text has. */
export const MARKER_PATTERN = /mk[0-9a-f]{12}/g;

export function finalizeDraft(draft: Draft): FuzzCase {
  let body = draft.text ?? JSON.stringify(draft.message) ?? '';
  if (draft.text === undefined) for (const [sentinel, token] of draft.raw) body = body.split(JSON.stringify(sentinel)).join(token);
  return { label: draft.label, principal: draft.principal, headers: draft.headers, body, markers: draft.markers };
}
