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

/**
 * The most progress reports one run makes: each report is a few history events, and a
 * STANDARD execution keeps at most 25,000, so an hour-long run reports every 30 s, not every second.
 */
export const MAX_PROGRESS_TICKS = 120;

/** One step of a run: wait `seconds`, then report `elapsed` of the whole. */
export interface RunTick {
  seconds: number;
  elapsed: number;
}

/** The run's duration cut into ticks: every second, or evenly when that would be too many. */
export function progressTicks(durationSeconds: number): RunTick[] {
  const step = Math.max(1, Math.ceil(durationSeconds / MAX_PROGRESS_TICKS));
  const ticks: RunTick[] = [];
  for (let elapsed = 0; elapsed < durationSeconds; ) {
    const seconds = Math.min(step, durationSeconds - elapsed);
    elapsed += seconds;
    ticks.push({ seconds, elapsed });
  }
  return ticks;
}
