/**
 * asl-validator's verdict on a definition, with its JSON Schemas compiled once per process.
 * asl-validator builds a new Ajv and compiles its fifteen schemas on every call, most of the
 * call's CPU. This runs the same schemas, formats and checks, taken from asl-validator's own
 * package, through one Ajv the process keeps: the findings are its own, in its order and words.
 * Only `{ checkPaths: true, checkArn: true }` is done, the one way the project validates.
 * The order of its checks is its main function's, so the package is pinned to one version, and
 * test/unit/asl-validator-schemas-compiled-once.test.ts holds the findings to its own on every
 * kind of refusal: an upgrade is a deliberate change that the test checks again.
 */
import { createRequire } from 'node:module';
import type { AslFinding } from './asl-findings.ts';

/** asl-validator's result, as its main function returns it. */
export interface AslValidation {
  isValid: boolean;
  errors: AslFinding[];
  errorsText: (separator?: string) => string;
}

type Definition = Record<string, unknown>;
type Check = (definition: Definition, options: typeof OPTIONS) => AslFinding[];
interface StateEntry {
  stateName: string;
  state: Definition;
}
interface StateCheck {
  filter: (entry: StateEntry) => boolean;
  checker: (entry: StateEntry) => AslFinding | null;
}
interface AjvError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  message?: string;
}
interface Ajv {
  addFormat(name: string, format: (value: string) => boolean): unknown;
  validate(schemaKeyRef: string, data: unknown): boolean;
  errors?: AjvError[] | null;
}
/** The names of asl-validator's error codes used here (its `StateMachineErrorCode`). */
type ErrorCodes = Record<
  | 'SchemaValidationFailed'
  | 'TaskTimeoutError'
  | 'TaskHeartbeatError'
  | 'MapItemProcessorError'
  | 'MapItemSelectorError'
  | 'WaitDurationError'
  | 'TerminalStateWithNextError'
  | 'MapToleratedFailureError'
  | 'MapMaxConcurrencyError'
  | 'MapItemsError'
  | 'MapItemReaderMaxItemsError'
  | 'MapItemBatcherError'
  | 'FailCauseProperty'
  | 'FailErrorProperty',
  string
>;
type AjvClass = new (options: { schemas: object[]; allowUnionTypes: boolean }) => Ajv;

/** The options asl-validator's checks receive (the schema formats below are the ones they select). */
const OPTIONS = { checkPaths: true, checkArn: true } as const;
const STATE_MACHINE = 'http://asl-validator.cloud/state-machine.json#';
/** asl-validator's schema files, in the order it hands them to Ajv. */
const SCHEMAS = [
  'common',
  'paths',
  'jsonata',
  'choice',
  'fail',
  'parallel',
  'pass',
  'base-state-machine',
  'state-machine',
  'state',
  'succeed',
  'task',
  'wait',
  'map',
  'errors',
];

let validator: ((definition: Definition) => AslValidation) | undefined;

/** asl-validator's `validator(definition, { checkPaths: true, checkArn: true })`, which also writes the query language it assumes on each state. */
export function validateAsl(definition: object): AslValidation {
  // Built on first use, not at module load: the deployed Lambda never validates definitions.
  validator ??= buildValidator();
  return validator(definition as Definition);
}

function buildValidator(): (definition: Definition) => AslValidation {
  // Each part as asl-validator itself requires it, so the versions are the ones it ships with.
  const part = createRequire(createRequire(import.meta.url).resolve('asl-validator'));
  const { JSONPath } = part('jsonpath-plus') as { JSONPath: (options: { path: string; json: unknown }) => Definition[] };
  const code = (part('./types') as { StateMachineErrorCode: ErrorCodes }).StateMachineErrorCode;
  const schemaErrors = schemaCheck(part);
  const checks: Check[] = [
    (part('./checks/missing-transition-target-errors') as { missingTransitionTargetErrors: Check }).missingTransitionTargetErrors,
    (part('./checks/state-transitions-errors') as { stateTransitionsErrors: Check }).stateTransitionsErrors,
    (part('./checks/duplicate-state-names-errors') as { duplicateStateNames: Check }).duplicateStateNames,
    (part('./checks/missing-terminal-state-errors') as { missingTerminalStateErrors: Check }).missingTerminalStateErrors,
    (part('./checks/duplicate-payload-template-fields') as { mustNotHaveDuplicateFieldNamesAfterEvaluation: Check })
      .mustNotHaveDuplicateFieldNamesAfterEvaluation,
    perStateChecks(part, code),
  ];

  return (definition) => {
    // A state machine's query language defaults to JSONPath; asl-validator writes it on each state that names none.
    const defaultQueryLanguage = definition.QueryLanguage ?? 'JSONPath';
    for (const states of JSONPath({ path: '$..States', json: definition })) {
      for (const stateName of Object.keys(states)) {
        const state = states[stateName] as Definition;
        if (!state.QueryLanguage) state.QueryLanguage = defaultQueryLanguage;
      }
    }
    const errors = schemaErrors(definition);
    if (errors.length === 0) for (const check of checks) errors.push(...check(definition, OPTIONS));
    return {
      isValid: errors.length === 0,
      errors,
      errorsText: (separator = '\n') => errors.map((error) => `${error['Error code']}: ${error.Message}`).join(separator),
    };
  };
}

/** asl-validator's schema step (its `jsonSchemaErrors`), over one Ajv compiled on its first definition. */
function schemaCheck(part: NodeJS.Require): (definition: Definition) => AslFinding[] {
  const Ajv = (part('ajv') as { default: AjvClass }).default;
  const addFormats = (part('ajv-formats') as { default: (ajv: Ajv) => void }).default;
  const jsonata = part('jsonata') as (expression: string) => unknown;
  const { registerAll } = part('asl-path-validator') as { registerAll: (ajv: Ajv) => void };
  const { isArnFormatValid } = part('./checks/formats') as { isArnFormatValid: (value: string) => boolean };
  const code = (part('./types') as { StateMachineErrorCode: ErrorCodes }).StateMachineErrorCode;

  const ajv = new Ajv({ schemas: SCHEMAS.map((name) => part(`./schemas/${name}.json`) as object), allowUnionTypes: true });
  addFormats(ajv);
  const validateJsonataString = (value: string): boolean => {
    const trimmed = value.trim();
    try {
      let expression = trimmed.startsWith('{%') ? trimmed.slice(2) : trimmed;
      expression = expression.endsWith('%}') ? expression.slice(0, -2) : expression;
      jsonata(expression);
      return true;
    } catch {
      return false;
    }
  };
  ajv.addFormat('jsonata_string', validateJsonataString);
  ajv.addFormat('maybe_jsonata_string', (value) => {
    const trimmed = value.trim();
    return trimmed.startsWith('{%') || trimmed.endsWith('%}') ? validateJsonataString(trimmed) : true;
  });
  registerAll(ajv);
  ajv.addFormat('asl_arn', isArnFormatValid);

  return (definition) => {
    ajv.validate(STATE_MACHINE, definition);
    if (!ajv.errors) return [];
    // Of Ajv's errors (a oneOf tries every branch), asl-validator keeps the deepest; where a
    // oneOf failed there, only the oneOf; then each schema path and instance path once.
    let selected: AjvError[] = [];
    let deepest = 0;
    for (const error of ajv.errors) {
      const depth = error.instancePath.split('/').length;
      if (depth === deepest) selected.push(error);
      else if (depth > deepest) selected = [error];
      deepest = Math.max(deepest, depth);
    }
    const oneOfPaths = new Set(selected.filter((error) => error.keyword === 'oneOf').map((error) => error.instancePath));
    const findings = selected
      .filter((error) => error.keyword === 'oneOf' || !oneOfPaths.has(error.instancePath))
      .map((error) => ({
        'Error code': code.SchemaValidationFailed,
        Message: `${error.instancePath} is invalid. ${error.message ?? ''}`,
        schemaError: { instancePath: error.instancePath, schemaPath: decodeURIComponent(error.schemaPath) },
      }));
    return findings.filter(
      (finding, i) =>
        findings.findIndex(
          (other) => other.schemaError.schemaPath === finding.schemaError.schemaPath && other.schemaError.instancePath === finding.schemaError.instancePath,
        ) === i,
    );
  };
}

/** asl-validator's checks of one state's fields against each other, in its order. */
function perStateChecks(part: NodeJS.Require, code: ErrorCodes): Check {
  type Filter = StateCheck['filter'];
  type Count = (options: { props: string[]; errorCode: string; path?: string }) => StateCheck['checker'];
  const checks = part('./checks/state-checks') as {
    stateChecks: (definition: Definition, options: typeof OPTIONS, checks: StateCheck[]) => AslFinding[];
    AtMostOne: Count;
    ExactlyOne: Count;
    IsTask: Filter;
    IsMap: Filter;
    IsWait: Filter;
    IsSucceed: Filter;
    IsFail: Filter;
    IsChoice: Filter;
  };
  const { AtMostOne, ExactlyOne, IsTask, IsMap, IsWait, IsSucceed, IsFail, IsChoice } = checks;
  const each = (filter: Filter, count: Count, props: string[], errorCode: string, path?: string): StateCheck => ({
    filter,
    checker: count({ props, errorCode, ...(path === undefined ? {} : { path }) }),
  });
  const list: StateCheck[] = [
    each(IsTask, AtMostOne, ['TimeoutSeconds', 'TimeoutSecondsPath'], code.TaskTimeoutError),
    each(IsTask, AtMostOne, ['HeartbeatSeconds', 'HeartbeatSecondsPath'], code.TaskHeartbeatError),
    each(IsMap, ExactlyOne, ['ItemProcessor', 'Iterator'], code.MapItemProcessorError),
    each(IsMap, AtMostOne, ['ItemSelector', 'Parameters'], code.MapItemSelectorError),
    each(IsWait, ExactlyOne, ['Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath'], code.WaitDurationError),
    // Every state but Succeed, Fail and Choice either ends or names its next state.
    each((entry) => !(IsSucceed(entry) || IsFail(entry) || IsChoice(entry)), ExactlyOne, ['End', 'Next'], code.TerminalStateWithNextError),
    each(IsMap, AtMostOne, ['ToleratedFailureCount', 'ToleratedFailureCountPath'], code.MapToleratedFailureError),
    each(IsMap, AtMostOne, ['ToleratedFailurePercentage', 'ToleratedFailurePercentagePath'], code.MapToleratedFailureError),
    each(IsMap, AtMostOne, ['MaxConcurrency', 'MaxConcurrencyPath'], code.MapMaxConcurrencyError),
    each(IsMap, AtMostOne, ['Items', 'ItemsPath'], code.MapItemsError),
    each(IsMap, AtMostOne, ['MaxItems', 'MaxItemsPath'], code.MapItemReaderMaxItemsError, '$.ItemReader.ReaderConfig'),
    each(IsMap, AtMostOne, ['MaxItemsPerBatch', 'MaxItemsPerBatchPath'], code.MapItemBatcherError, '$.ItemBatcher'),
    each(IsMap, AtMostOne, ['MaxInputBytesPerBatch', 'MaxInputBytesPerBatchPath'], code.MapItemBatcherError, '$.ItemBatcher'),
    each(IsFail, AtMostOne, ['Cause', 'CausePath'], code.FailCauseProperty),
    each(IsFail, AtMostOne, ['Error', 'ErrorPath'], code.FailErrorProperty),
  ];
  return (definition, options) => checks.stateChecks(definition, options, list);
}
