/**
 * Validates tool arguments against the tool's `inputSchema` (JSON Schema, compiled
 * once per tool on first use) and says which field failed.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { ToolSpec } from '../operations/tool-spec.ts';

export type ValidationResult = { ok: true; value: Record<string, unknown> } | { ok: false; message: string; field: string };

const ajv = new Ajv2020({ strict: false, allErrors: true });
const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

export function validateArguments(tool: ToolSpec, args: unknown): ValidationResult {
  const value = args ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, field: 'arguments', message: `Invalid arguments for tool ${tool.name}: arguments must be an object` };
  }
  const validate = validatorFor(tool.inputSchema);
  if (validate(value)) return { ok: true, value: value as Record<string, unknown> };
  const first = validate.errors![0]!;
  const field = fieldOf(first);
  return { ok: false, field, message: `Invalid arguments for tool ${tool.name}: ${field} ${problemOf(first)}` };
}

function problemOf(error: ErrorObject): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'is not an allowed argument';
  return error.message ?? 'is invalid';
}

/** A readable field path: `arguments.a`, or the missing property for `required`. */
function fieldOf(error: ErrorObject): string {
  const path = error.instancePath.split('/').filter(Boolean);
  if (error.keyword === 'required') path.push(String((error.params as { missingProperty: string }).missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String((error.params as { additionalProperty: string }).additionalProperty));
  return ['arguments', ...path].join('.');
}
