/**
 * `mocks.json`: local stand-ins for Task states, in the mock configuration format of
 * AWS Step Functions Local: `StateMachines.<machine>.TestCases.<case>.<state>` names a
 * mocked response, and `MockedResponses.<name>` maps invocation indexes (`"0"`, `"1-2"`)
 * to `{ "Return": <output> }` or `{ "Throw": { "Error", "Cause" } }`. The test case named
 * `Default` is used, or the only one there is. Only the local runtime reads this file.
 */
import * as z from 'zod';

export const MOCKS_FILE = 'mocks.json';
export const DEFAULT_TEST_CASE = 'Default';

/** What one invocation of a mocked state does. */
export type MockedResponse = { Return: unknown } | { Throw: { Error: string; Cause?: string } };

/** The mocks of one tool: the test case in use, resolved. */
export interface ToolMocks {
  testCase: string;
  /** State name -> the mocked response's name and its responses by invocation index (0, 1, ...). */
  states: ReadonlyMap<string, { response: string; byInvocation: readonly MockedResponse[] }>;
}

const INDEX = /^(\d+)(?:-(\d+))?$/;

const MockedResponseSchema = z.union([
  z.strictObject({ Return: z.unknown().refine((value) => value !== undefined, 'Return needs a value') }),
  z.strictObject({ Throw: z.strictObject({ Error: z.string().min(1), Cause: z.string().optional() }) }),
]);

const MocksFileSchema = z.strictObject({
  StateMachines: z.record(z.string(), z.strictObject({ TestCases: z.record(z.string(), z.record(z.string(), z.string().min(1))) })),
  MockedResponses: z.record(z.string(), z.record(z.string(), z.unknown())),
});

/**
 * Validates a parsed `mocks.json` for a machine known by any of `machineNames` (the tool
 * name, and for an existing machine also its own name). Returns every problem found.
 */
export function parseToolMocks(json: unknown, machineNames: readonly string[]): { mocks?: ToolMocks; problems: string[] } {
  const parsed = MocksFileSchema.safeParse(json);
  if (!parsed.success) {
    return { problems: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`) };
  }
  const file = parsed.data;
  const problems: string[] = [];
  const machineName = machineNames.find((name) => file.StateMachines[name] !== undefined);
  const machine = machineName === undefined ? undefined : file.StateMachines[machineName];
  if (!machineName || !machine) {
    const found = Object.keys(file.StateMachines);
    return {
      problems: [
        `StateMachines has ${found.length ? found.map((n) => `"${n}"`).join(', ') : 'no entry'}; name this tool's entry ${machineNames.map((n) => `"${n}"`).join(' or ')}`,
      ],
    };
  }
  const testCases = machine.TestCases;
  const caseNames = Object.keys(testCases);
  const testCase = testCases[DEFAULT_TEST_CASE] ? DEFAULT_TEST_CASE : caseNames.length === 1 ? caseNames[0] : undefined;
  const mockedStates = testCase === undefined ? undefined : testCases[testCase];
  if (testCase === undefined || mockedStates === undefined) {
    return {
      problems: [
        `StateMachines.${machineName}.TestCases has ${caseNames.length ? caseNames.map((n) => `"${n}"`).join(', ') : 'no test case'}: name the one to use "${DEFAULT_TEST_CASE}"`,
      ],
    };
  }

  const resolved = new Map<string, MockedResponse[]>();
  for (const [name, indexes] of Object.entries(file.MockedResponses)) {
    const result = resolveResponses(indexes);
    for (const problem of result.problems) problems.push(`MockedResponses.${name}: ${problem}`);
    if (result.problems.length === 0) resolved.set(name, result.byInvocation);
  }
  const states = new Map<string, { response: string; byInvocation: MockedResponse[] }>();
  for (const [state, response] of Object.entries(mockedStates)) {
    const byInvocation = resolved.get(response);
    if (!file.MockedResponses[response]) {
      problems.push(`StateMachines.${machineName}.TestCases.${testCase}.${state} names "${response}", which MockedResponses does not define`);
    } else if (byInvocation) {
      states.set(state, { response, byInvocation });
    }
  }
  return problems.length > 0 ? { problems } : { mocks: { testCase, states }, problems };
}

/** Expands `{"0": …, "1-2": …}` into one response per invocation; indexes must cover 0..n without gaps or overlaps. */
function resolveResponses(indexes: Record<string, unknown>): { byInvocation: MockedResponse[]; problems: string[] } {
  const problems: string[] = [];
  const ranges: { from: number; to: number; response: MockedResponse }[] = [];
  for (const [key, value] of Object.entries(indexes)) {
    const match = INDEX.exec(key);
    const from = match ? Number(match[1]) : NaN;
    const to = match?.[2] === undefined ? from : Number(match[2]);
    if (!match || to < from) {
      problems.push(`"${key}" is not an invocation index: use "0", "1", ... or a range such as "1-2"`);
      continue;
    }
    const response = MockedResponseSchema.safeParse(value);
    if (!response.success) {
      problems.push(`"${key}" must be { "Return": <output> } or { "Throw": { "Error": "...", "Cause": "..." } }`);
      continue;
    }
    ranges.push({ from, to, response: response.data as MockedResponse });
  }
  if (ranges.length === 0 && problems.length === 0) problems.push('defines no response: add "0": { "Return": ... }');
  const byInvocation: MockedResponse[] = [];
  for (const range of ranges.sort((a, b) => a.from - b.from)) {
    if (range.from !== byInvocation.length) {
      problems.push(
        range.from < byInvocation.length
          ? `invocation ${range.from} is defined twice`
          : `invocation ${byInvocation.length} has no response (indexes must run 0, 1, 2, ... without gaps)`,
      );
      break;
    }
    for (let i = range.from; i <= range.to; i++) byInvocation.push(range.response);
  }
  return { byInvocation, problems };
}
