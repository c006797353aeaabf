/**
 * JSONata in Amazon States Language, the way Step Functions evaluates it: a string that is
 * exactly `{% … %}` is an expression, everything else is a literal; objects and arrays are
 * templates whose string leaves may be expressions. An expression sees no context item, only
 * `$states` and the workflow variables, plus the functions Step Functions adds ($partition,
 * $range, $hash, $random, $uuid, $parse) and without `$eval`. An expression that fails, or
 * returns nothing, fails the state with `States.QueryEvaluationError`, naming the field.
 */
import { createHash, randomUUID } from 'node:crypto';
import jsonata from 'jsonata';
import { TaskError } from './sfn-facade-errors.ts';

const EXPRESSION = /^\{%([\s\S]*)%\}$/;
const QUERY_EVALUATION_ERROR = 'States.QueryEvaluationError';
const HASH_ALGORITHMS: Record<string, string> = { MD5: 'md5', 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

/** The bindings an expression sees: `$states` and every variable in scope. */
export type JsonataBindings = Record<string, unknown>;

/** The expression text of `value` when it is a `{% … %}` string. */
export function jsonataExpression(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return EXPRESSION.exec(value)?.[1]?.trim();
}

const compiled = new Map<string, jsonata.Expression>();

/** Parses an expression once; throws with the parser's message when it is not JSONata. */
export function compileJsonata(text: string): jsonata.Expression {
  let expression = compiled.get(text);
  if (expression) return expression;
  try {
    expression = jsonata(text);
  } catch (error) {
    throw new Error(`the JSONata expression '${text}' is invalid: ${(error as Error).message}`);
  }
  registerStepFunctionsFunctions(expression);
  compiled.set(text, expression);
  return expression;
}

/** Checks every expression of a field at load time; throws naming the first that does not parse. */
export function checkJsonataTemplate(template: unknown, field: string): void {
  visitExpressions(template, field, (text, at) => {
    try {
      compileJsonata(text);
    } catch (error) {
      throw new Error(`${at}: ${(error as Error).message}`);
    }
  });
}

/** Whether `template` holds any `{% … %}` expression. */
export function hasJsonata(template: unknown): boolean {
  let found = false;
  visitExpressions(template, '', () => (found = true));
  return found;
}

/** Evaluates a template: expressions are replaced by their values, literals are kept. */
export async function evaluateJsonataTemplate(template: unknown, bindings: JsonataBindings, field: string): Promise<unknown> {
  const text = jsonataExpression(template);
  if (text !== undefined) return evaluateJsonata(text, bindings, field);
  if (Array.isArray(template)) {
    return Promise.all(template.map((item, index) => evaluateJsonataTemplate(item, bindings, `${field}[${index}]`)));
  }
  if (typeof template === 'object' && template !== null) {
    const entries = await Promise.all(
      Object.entries(template).map(async ([key, value]) => [key, await evaluateJsonataTemplate(value, bindings, `${field}/${key}`)] as const),
    );
    return Object.fromEntries(entries);
  }
  return template;
}

async function evaluateJsonata(text: string, bindings: JsonataBindings, field: string): Promise<unknown> {
  let result: unknown;
  try {
    result = await compileJsonata(text).evaluate(undefined, bindings);
  } catch (error) {
    const reason = error instanceof TaskError ? error.message : `${(error as { code?: string }).code ?? 'Error'}: ${(error as Error).message}`;
    throw new TaskError(
      QUERY_EVALUATION_ERROR,
      `The JSONata expression '${text}' specified for the field '${field}' threw an error during evaluation. ${reason}`,
    );
  }
  if (result === undefined) {
    throw new TaskError(QUERY_EVALUATION_ERROR, `The JSONata expression '${text}' specified for the field '${field}' returned nothing (undefined).`);
  }
  // Sequences and functions are JSONata's own; what leaves a field is JSON.
  return toJson(result);
}

function toJson(value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'function') return undefined;
  if (Array.isArray(value)) return value.map((item) => toJson(item) ?? null);
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([key, item]) => [key, toJson(item)] as const);
    return Object.fromEntries(entries.filter(([, item]) => item !== undefined));
  }
  return value;
}

function visitExpressions(template: unknown, field: string, visit: (text: string, field: string) => void): void {
  const text = jsonataExpression(template);
  if (text !== undefined) visit(text, field);
  else if (Array.isArray(template)) {
    for (const [index, item] of template.entries()) visitExpressions(item, `${field}[${index}]`, visit);
  } else if (typeof template === 'object' && template !== null) {
    for (const [key, value] of Object.entries(template)) visitExpressions(value, `${field}/${key}`, visit);
  }
}

/** The functions Step Functions adds to JSONata, with its rules (non-integers truncate towards zero). */
function registerStepFunctionsFunctions(expression: jsonata.Expression): void {
  expression.registerFunction(
    'partition',
    (array: unknown[], size: number) => {
      const chunk = Math.trunc(size);
      if (!Array.isArray(array) || array.length === 0 || !(chunk > 0)) return undefined;
      const chunks: unknown[][] = [];
      for (let i = 0; i < array.length; i += chunk) chunks.push(array.slice(i, i + chunk));
      return chunks;
    },
    '<an:a>',
  );
  expression.registerFunction(
    'range',
    (start: number, end: number, step?: number) => {
      const [from, to, by] = [Math.trunc(start), Math.trunc(end), step === undefined ? 0 : Math.trunc(step)];
      if (by === 0 || (to - from) * by < 0) return undefined;
      const values: number[] = [];
      for (let value = from; by > 0 ? value <= to : value >= to; value += by) values.push(value);
      return values.length === 1 ? values[0] : values;
    },
    '<nnn?:a<n>>',
  );
  expression.registerFunction(
    'hash',
    (text: string, algorithm?: string) => {
      const name = algorithm === undefined ? undefined : HASH_ALGORITHMS[algorithm];
      if (!name) return undefined;
      return createHash(name).update(text).digest('hex');
    },
    '<ss?:s>',
  );
  expression.registerFunction('random', (seed?: number) => (seed === undefined ? Math.random() : seededRandom(Math.trunc(seed))), '<n?:n>');
  expression.registerFunction('uuid', () => randomUUID(), '<:s>');
  expression.registerFunction(
    'parse',
    (text: string) => {
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        throw new TaskError(QUERY_EVALUATION_ERROR, `$parse: ${(error as Error).message}`);
      }
    },
    '<s:x>',
  );
  expression.registerFunction('eval', () => {
    throw new TaskError(QUERY_EVALUATION_ERROR, 'The function $eval is not supported by Step Functions; use $parse');
  });
}

/** mulberry32: reproducible for one seed, which is all `$random(seed)` promises. */
function seededRandom(seed: number): number {
  let t = (seed + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
