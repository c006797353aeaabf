/**
 * asl-validator builds a new Ajv and compiles its JSON Schemas on every call; the deep check of
 * a definition compiles them once per process and reuses them for every definition, with the
 * findings asl-validator gives: the same list, in the same order and words, and the definition
 * left as it leaves it (the query language it assumed, on every state).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validateAsl } from '../../lambdas/tools/asl-validation.ts';
import { checkDefinition } from '../../lambdas/tools/definition-check.ts';
import { DEFAULT_TOOLS_DIR } from '../../cdk/repo-paths.ts';
import { watchAslSchemaRuns, type AslSchemaRuns } from '../support/asl-schema-runs.ts';

type Upstream = (
  definition: unknown,
  options: { checkPaths: boolean; checkArn: boolean },
) => { isValid: boolean; errors: unknown[]; errorsText: (separator?: string) => string };
const upstream = createRequire(import.meta.url)('asl-validator') as Upstream;

let watch: AslSchemaRuns;
beforeEach(() => {
  watch = watchAslSchemaRuns();
});
afterEach(() => {
  watch.restore();
});

const task = (extra: Record<string, unknown>) => ({ Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:work', ...extra });
/** One definition for each of asl-validator's findings. */
const refused: Record<string, object> = {
  'a Type outside the language': { StartAt: 'A', States: { A: { Type: 'Pas', End: true } } },
  'a QueryLanguage outside the language': { QueryLanguage: 'JSONPat', StartAt: 'A', States: { A: { Type: 'Pass', End: true } } },
  'no StartAt': { States: { A: { Type: 'Pass', End: true } } },
  'a malformed path': { StartAt: 'A', States: { A: { Type: 'Pass', OutputPath: '$$$.x', End: true } } },
  'a Resource that is no ARN': { StartAt: 'A', States: { A: { Type: 'Task', Resource: 'not-an-arn', End: true } } },
  'a malformed JSONata expression': { QueryLanguage: 'JSONata', StartAt: 'A', States: { A: { Type: 'Pass', Output: '{% $$$( %}', End: true } } },
  'a Next to no state': { StartAt: 'A', States: { A: { Type: 'Pass', Next: 'Nowhere' } } },
  'a branch leaving its Parallel': {
    StartAt: 'P',
    States: {
      P: { Type: 'Parallel', Next: 'Done', Branches: [{ StartAt: 'X', States: { X: { Type: 'Pass', Next: 'Done' } } }] },
      Done: { Type: 'Succeed' },
    },
  },
  'a state name used twice': { StartAt: 'P', States: { P: { Type: 'Parallel', End: true, Branches: [{ StartAt: 'P', States: { P: { Type: 'Succeed' } } }] } } },
  'no terminal state': { StartAt: 'A', States: { A: { Type: 'Pass', Next: 'B' }, B: { Type: 'Pass', Next: 'A' } } },
  'a field twice in a payload template': { StartAt: 'A', States: { A: { Type: 'Pass', Parameters: { a: 1, 'a.$': '$.x' }, End: true } } },
  'a timeout and a timeout path': { StartAt: 'A', States: { A: task({ TimeoutSeconds: 5, TimeoutSecondsPath: '$.t', End: true }) } },
  'a Wait without a duration': { StartAt: 'A', States: { A: { Type: 'Wait', End: true } } },
  'both End and Next': { StartAt: 'A', States: { A: { Type: 'Pass', End: true, Next: 'B' }, B: { Type: 'Succeed' } } },
  'a Map with Items and ItemsPath': {
    StartAt: 'M',
    States: { M: { Type: 'Map', Items: [1], ItemsPath: '$.x', ItemProcessor: { StartAt: 'I', States: { I: { Type: 'Succeed' } } }, End: true } },
  },
  'a Fail with Cause and CausePath': { StartAt: 'F', States: { F: { Type: 'Fail', Cause: 'x', CausePath: '$.c' } } },
};
/** The deployed tools' definitions: JSONPath and JSONata, Map, Parallel, callbacks. */
const accepted = Object.fromEntries(
  ['analyze_dataset', 'approve_deployment', 'export_dataset', 'quick_calculation', 'run_test_suite', 'summarize_numbers'].map((tool) => [
    tool,
    JSON.parse(readFileSync(join(DEFAULT_TOOLS_DIR, tool, 'definition.asl.json'), 'utf8')) as object,
  ]),
);

describe('asl-validator schemas compiled once per process', () => {
  it('checks three definitions it has not seen on one compile of the schemas', () => {
    const problems: string[] = [];
    for (const States of [{ A: { Type: 'Pass', End: true } }, { A: { Type: 'Pas', End: true } }, { A: { Type: 'Succeed' } }])
      checkDefinition({ Comment: randomUUID(), StartAt: 'A', States }, (reason) => problems.push(reason));
    expect(watch.runs).toBe(3);
    expect(watch.instances.size).toBe(1);
    expect(problems).toContainEqual(expect.stringMatching(/^not valid Amazon States Language: \/States\/A\/Type is "Pas": must be one of Task, Pass/));
  });

  it.each(Object.entries({ ...refused, ...accepted }))('finds what asl-validator finds in %s, and leaves the definition as it does', (name, definition) => {
    const ours = structuredClone(definition);
    const theirs = structuredClone(definition);
    const result = validateAsl(ours);
    const expected = upstream(theirs, { checkPaths: true, checkArn: true });
    expect(result.isValid).toBe(expected.isValid);
    expect(result.isValid).toBe(!(name in refused));
    expect(result.errors).toStrictEqual(expected.errors);
    expect(result.errorsText('; ')).toBe(expected.errorsText('; '));
    expect(ours).toStrictEqual(theirs);
  });
});
