/** The simulated test run behind run_test_suite. */

/** The run_test_suite arguments. */
export interface TestSuiteRequest {
  suite: string;
  tests: number;
  failures: number;
  durationSeconds: number;
  crash?: boolean | undefined;
}

/** The run_test_suite result (its outputSchema). */
export interface TestSuiteReport {
  suite: string;
  passed: number;
  failed: number;
  durationSeconds: number;
}

/** Thrown when the caller asks the suite to crash; its name becomes the execution's Error. */
export class TestSuiteCrashedError extends Error {
  constructor(suite: string) {
    super(`Test suite "${suite}" crashed before producing a report`);
    this.name = 'TestSuiteCrashed';
  }
}

/**
 * Thrown for `failures > tests`. The state machine rejects that case before running,
 * so reaching this means the definition and the worker disagree.
 */
export class InvalidTestCountsError extends Error {
  constructor(tests: number, failures: number) {
    super(`failures (${failures}) must not exceed tests (${tests})`);
    this.name = 'InvalidTestCounts';
  }
}

/** The report of a finished (simulated) run: `failures` of `tests` failed, the rest passed. */
export function reportTestSuite(request: TestSuiteRequest): TestSuiteReport {
  if (request.crash) throw new TestSuiteCrashedError(request.suite);
  if (request.failures > request.tests) throw new InvalidTestCountsError(request.tests, request.failures);
  return {
    suite: request.suite,
    passed: request.tests - request.failures,
    failed: request.failures,
    durationSeconds: request.durationSeconds,
  };
}
