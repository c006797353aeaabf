/**
 * Shrinks a failing case to a smaller one that still fails the same way: fields, array
 * items, string tails and headers are dropped while the failure stays; a body that is not
 * JSON loses slices of its text instead. Bounded, so a stubborn case costs little.
 */
import type { FuzzCase } from './fuzz-case.ts';

const MAX_ATTEMPTS = 400;

/** Problems stripped of their variable parts, so "the same failure" survives shrinking. */
export function problemKind(problem: string): string {
  return problem
    .replace(/mk[0-9a-f]{12}/g, 'MARKER')
    .replace(/\d+/g, '#')
    .slice(0, 48);
}

export async function shrinkCase(original: FuzzCase, stillFails: (candidate: FuzzCase) => Promise<boolean>): Promise<FuzzCase> {
  let best = original;
  let attempts = 0;
  const attempt = async (candidate: FuzzCase): Promise<boolean> => {
    if (attempts++ >= MAX_ATTEMPTS) return false;
    if (!(await stillFails(candidate))) return false;
    best = candidate;
    return true;
  };

  for (const name of Object.keys(best.headers)) {
    const { [name]: _dropped, ...headers } = best.headers;
    await attempt({ ...best, headers });
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(best.body);
  } catch {
    return shrinkText(best, attempt, () => attempts >= MAX_ATTEMPTS);
  }
  try {
    // Greedy passes until nothing shrinks any more.
    for (let changed = true; changed && attempts < MAX_ATTEMPTS; ) {
      changed = false;
      for (const candidate of smallerValues(parsed)) {
        const body = JSON.stringify(candidate);
        if (body === undefined || body.length >= best.body.length) continue;
        if (await attempt({ ...best, body })) {
          parsed = candidate;
          changed = true;
          break;
        }
      }
    }
  } catch (error) {
    // Nested too deep to walk recursively: shrink the text instead.
    if (!(error instanceof RangeError)) throw error;
    return shrinkText(best, attempt, () => attempts >= MAX_ATTEMPTS);
  }
  return best;
}

/** Candidates one step smaller than `value`: each without one member, item or half of a string. */
function* smallerValues(value: unknown): Generator<unknown> {
  if (typeof value === 'string' && value.length > 8) {
    yield value.slice(0, Math.floor(value.length / 2));
    return;
  }
  if (Array.isArray(value)) {
    if (value.length > 1) yield value.slice(0, Math.ceil(value.length / 2));
    for (let i = 0; i < value.length; i++) yield [...value.slice(0, i), ...value.slice(i + 1)];
    for (let i = 0; i < value.length; i++) for (const smaller of smallerValues(value[i])) yield Object.assign([...value], { [i]: smaller });
    return;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    for (let i = 0; i < entries.length; i++) yield Object.fromEntries(entries.filter((_, j) => j !== i));
    for (const [key, child] of entries)
      for (const smaller of smallerValues(child)) yield Object.fromEntries(entries.map(([k, v]) => [k, k === key ? smaller : v]));
  }
}

/** Delta debugging on characters: drops ever smaller slices while the failure stays. */
async function shrinkText(start: FuzzCase, attempt: (c: FuzzCase) => Promise<boolean>, exhausted: () => boolean): Promise<FuzzCase> {
  let best = start;
  for (let size = Math.floor(best.body.length / 2); size >= 1 && !exhausted(); size = Math.floor(size / 2)) {
    for (let at = 0; at + size <= best.body.length && !exhausted(); ) {
      const candidate = { ...best, body: best.body.slice(0, at) + best.body.slice(at + size) };
      if (await attempt(candidate)) best = candidate;
      else at += size;
    }
  }
  return best;
}
