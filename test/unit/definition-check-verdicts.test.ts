/**
 * The deep check keeps its verdict on each definition text: a process that meets the same
 * definition again (another local stack, a --watch reload, a synth) does not validate it twice,
 * and sees what it saw first.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkDefinition } from '../../lambdas/tools/definition-check.ts';
import { watchAslSchemaRuns, type AslSchemaRuns } from '../support/asl-schema-runs.ts';

/** Counts asl-validator's runs: each runs its state-machine schema once. */
let watch: AslSchemaRuns;
beforeEach(() => {
  watch = watchAslSchemaRuns();
});
afterEach(() => {
  watch.restore();
});

/** A definition no other test checks (the verdicts are the process's). */
function definition(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { Comment: randomUUID(), StartAt: 'Work', States: { Work: { Type: 'Pass', Next: 'Done' }, Done: { Type: 'Succeed' } }, ...extra };
}

function problemsOf(value: unknown): string[] {
  const problems: string[] = [];
  checkDefinition(value, (reason) => problems.push(reason));
  return problems;
}

describe('the deep check of a definition', () => {
  it('runs asl-validator once per definition text: a second check of the same text reports the same problems without it', () => {
    const text = JSON.stringify(definition({ States: { Work: { Type: 'Pas', End: true } } }));
    const first = problemsOf(JSON.parse(text));
    const second = problemsOf(JSON.parse(text));
    expect(first).toContainEqual(expect.stringMatching(/^not valid Amazon States Language: .*Type is "Pas": must be one of Task, Pass/));
    expect(second).toEqual(first);
    expect(watch.runs).toBe(1);
  });

  it('leaves a definition checked again as asl-validator left the first: the query language it assumed, on every state', () => {
    const text = JSON.stringify(definition());
    const first = JSON.parse(text) as Record<string, unknown>;
    const second = JSON.parse(text) as Record<string, unknown>;
    expect(problemsOf(first)).toEqual([]);
    expect(problemsOf(second)).toEqual([]);
    expect(watch.runs).toBe(1);
    expect(first.States).toEqual({ Work: { Type: 'Pass', Next: 'Done', QueryLanguage: 'JSONPath' }, Done: { Type: 'Succeed', QueryLanguage: 'JSONPath' } });
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  it('gives each check objects of its own: a change to one definition reaches neither the other nor a later check', () => {
    const text = JSON.stringify(definition());
    const first = JSON.parse(text) as { States: Record<string, Record<string, unknown>> };
    problemsOf(first);
    first.States.Work!.QueryLanguage = 'JSONata';
    const second = JSON.parse(text) as { States: Record<string, Record<string, unknown>> };
    problemsOf(second);
    expect(second.States.Work!.QueryLanguage).toBe('JSONPath');
  });

  it('validates a definition saved with a change anew (a --watch reload of the folder)', () => {
    const before = definition();
    problemsOf(structuredClone(before));
    const after = { ...structuredClone(before), States: { Work: { Type: 'Pass', End: true } } };
    expect(problemsOf(after)).toEqual([]);
    expect(watch.runs).toBe(2);
  });

  it('gives nothing to Object.prototype when a definition has a "__proto__" key', () => {
    const text = `{"Comment":"${randomUUID()}","StartAt":"A","States":{"A":{"Type":"Pass","End":true}},"__proto__":{"polluted":true}}`;
    problemsOf(JSON.parse(text));
    problemsOf(JSON.parse(text));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
