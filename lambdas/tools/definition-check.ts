/**
 * The deep check of a tool's `definition.asl.json`: asl-validator's findings, one problem each
 * (JSONPath and JSONata both pass, DESIGN §3), and state names unique across the machine.
 */
import { createRequire } from 'node:module';
import { aslFindingMessages, type AslFinding } from './asl-findings.ts';
import { listStates } from './local-tasks.ts';

const require = createRequire(import.meta.url);
type AslValidator = (
  definition: unknown,
  options?: { checkPaths?: boolean; checkArn?: boolean },
) => { isValid: boolean; errors: AslFinding[] | null; errorsText: (separator?: string) => string };

/** Reports each problem of `definition`, in the author's terms. */
export function checkDefinition(definition: unknown, report: (reason: string) => void): void {
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) {
    report('the definition must be a JSON object');
    return;
  }
  // Required here, not at module load: the deployed Lambda never validates definitions.
  const validateAsl = require('asl-validator') as AslValidator;
  const result = validateAsl(definition, { checkPaths: true, checkArn: true });
  if (!result.isValid) {
    const messages = result.errors ? aslFindingMessages(result.errors, definition) : [result.errorsText('; ')];
    for (const message of messages) report(`not valid Amazon States Language: ${message}`);
  }
  const seen = new Set<string>();
  for (const { name } of listStates(definition)) {
    // Local mocks and handlers are keyed by state name; ASL requires names unique across the machine.
    if (seen.has(name)) report(`state name "${name}" is used twice; state names must be unique across the machine`);
    seen.add(name);
  }
}
