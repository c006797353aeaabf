/**
 * Validates tool arguments against the tool's `inputSchema` (JSON Schema, compiled
 * once per tool on first use) and says which field failed.
 */
import type { ToolSpec } from '../../operations/tool-spec.ts';
import { compileSchema, type SchemaError } from '../../tools/json-schema.ts';

export type ValidationResult = { ok: true; value: Record<string, unknown> } | { ok: false; message: string; field: string };

export function validateArguments(tool: ToolSpec, args: unknown): ValidationResult {
  const value = args ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, field: 'arguments', message: `Invalid arguments for tool ${tool.name}: arguments must be an object` };
  }
  const validate = compileSchema(tool.inputSchema);
  if (validate(value)) return { ok: true, value: value as Record<string, unknown> };
  const first = validate.errors?.[0];
  if (!first) return { ok: false, field: 'arguments', message: `Invalid arguments for tool ${tool.name}` };
  const field = fieldOf(first);
  return { ok: false, field, message: `Invalid arguments for tool ${tool.name}: ${field} ${problemOf(first)}` };
}

function problemOf(error: SchemaError): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'is not an allowed argument';
  return error.message;
}

/** A readable field path: `arguments.a`, or the missing property for `required`. */
function fieldOf(error: SchemaError): string {
  const path = error.instancePath.split('/').filter(Boolean);
  if (error.missingProperty !== undefined) path.push(error.missingProperty);
  if (error.additionalProperty !== undefined) path.push(error.additionalProperty);
  return ['arguments', ...path].join('.');
}
