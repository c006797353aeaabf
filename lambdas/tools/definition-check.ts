/**
 * The deep check of a tool's `definition.asl.json`: asl-validator's findings, one problem each
 * (JSONPath and JSONata both pass, DESIGN §3), and state names unique across the machine.
 */
import { aslFindingMessages } from './asl-findings.ts';
import { validateAsl } from './asl-validation.ts';
import { listStates } from './local-tasks.ts';

/** What asl-validator made of one definition: its findings, and the definition as it left it. */
interface AslVerdict {
  messages: readonly string[];
  /** asl-validator writes the query language it assumed on every state that names none; templates carry it. */
  defaulted: unknown;
}

/**
 * asl-validator's verdicts, by the definition's JSON text: a process meets the same definitions
 * again and again (each local stack it starts, each --watch reload, each synth), and a verdict
 * also carries the defaulted copy every later check of that text is given.
 */
const verdicts = new Map<string, AslVerdict>();
/** Enough for every definition of a large project; past it, the oldest verdict goes first. */
export const REMEMBERED_VERDICTS = 512;

/** Reports each problem of `definition`, in the author's terms. */
export function checkDefinition(definition: unknown, report: (reason: string) => void): void {
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) {
    report('the definition must be a JSON object');
    return;
  }
  const verdict = aslVerdict(definition);
  for (const message of verdict.messages) report(`not valid Amazon States Language: ${message}`);
  addMissing(definition, verdict.defaulted);
  const seen = new Set<string>();
  for (const { name } of listStates(definition)) {
    // Local mocks and handlers are keyed by state name; ASL requires names unique across the machine.
    if (seen.has(name)) report(`state name "${name}" is used twice; state names must be unique across the machine`);
    seen.add(name);
  }
}

function aslVerdict(definition: object): AslVerdict {
  const text = JSON.stringify(definition);
  const known = verdicts.get(text);
  if (known) return known;
  const checked = JSON.parse(text) as object;
  const result = validateAsl(checked);
  const messages = result.isValid ? [] : aslFindingMessages(result.errors, checked);
  const verdict: AslVerdict = { messages, defaulted: checked };
  if (verdicts.size >= REMEMBERED_VERDICTS) verdicts.delete(verdicts.keys().next().value as string);
  verdicts.set(text, verdict);
  return verdict;
}

/** Gives `target` each key `source` has and it lacks, at any depth (a copy: verdicts are shared). */
function addMissing(target: unknown, source: unknown): void {
  if (typeof target !== 'object' || target === null || typeof source !== 'object' || source === null) return;
  for (const [key, value] of Object.entries(source)) {
    if (key === '__proto__') continue;
    if (Object.hasOwn(target, key)) addMissing((target as Record<string, unknown>)[key], value);
    else (target as Record<string, unknown>)[key] = structuredClone(value);
  }
}
