/**
 * Defects the fuzzer found that their owners have not fixed yet. Each is pinned by `it.fails`
 * tests in edge-fuzz.test.ts, which fail once it is fixed: then drop `.fails` there and the
 * entry here. A run counts its problems apart instead of failing on them.
 */
import type { FuzzCase } from './fuzz-case.ts';

export interface KnownDefect {
  name: string;
  /** Where the fix belongs. */
  where: string;
  matches(problem: string, fuzzCase: FuzzCase): boolean;
}

// Empty: the last one (SDK-schema methods answering invalid params with -32603 and the raw
// zod issue list) is fixed; its cases stay in edge-fuzz.test.ts as passing tests.
export const KNOWN_DEFECTS: readonly KnownDefect[] = [];

/** The known defect a problem is an instance of, if any. */
export function knownDefectOf(problem: string, fuzzCase: FuzzCase): KnownDefect | undefined {
  return KNOWN_DEFECTS.find((defect) => defect.matches(problem, fuzzCase));
}
