/**
 * Defects the fuzzer found that their owners have not fixed yet. Each is pinned by `it.fails`
 * tests in edge-fuzz.test.ts, which fail once it is fixed: then drop `.fails` there and the
 * entry here. A run counts its problems apart instead of failing on them.
 */
import type { FuzzCase } from './fuzz-case.ts';
import { INTERNAL_FOR_CLIENT_MISTAKE } from './edge-oracle.ts';

export interface KnownDefect {
  name: string;
  /** Where the fix belongs. */
  where: string;
  matches(problem: string, fuzzCase: FuzzCase): boolean;
}

export const KNOWN_DEFECTS: readonly KnownDefect[] = [
  {
    name: 'invalid params of a method registered with the SDK schema answer -32603 with a raw zod issue list',
    where:
      'initialize is the SDK Server\'s own handler (upstream typescript-sdk issue #2284)',
    // The SDK turns the schema's ZodError into -32603 whose message is the issue list (JSON, starting with "[").
    matches: (problem) => problem.startsWith(`${INTERNAL_FOR_CLIENT_MISTAKE}: [`) && problem.includes('"path"'),
  },
];

/** The known defect a problem is an instance of, if any. */
export function knownDefectOf(problem: string, fuzzCase: FuzzCase): KnownDefect | undefined {
  return KNOWN_DEFECTS.find((defect) => defect.matches(problem, fuzzCase));
}
