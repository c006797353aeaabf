/**
 * JSONPath in Amazon States Language, for the JSONPath states of a machine that also uses
 * JSONata or variables: paths over the data (`$`), the context object (`$$`), a variable
 * (`$name`) or the reserved `$states`; payload templates (`"key.$"`) with intrinsic
 * functions; and ResultPath. A path that matches nothing fails with `States.Runtime`.
 */
import { JSONPath } from 'jsonpath-plus';
import { evaluateIntrinsic } from './asl-intrinsics.ts';
import { TaskError } from './sfn-facade-errors.ts';

/** What a path can start from besides the data. */
export interface PathSources {
  context: unknown;
  /** `$name` → its value; `undefined` when no such variable is in scope. */
  variable(name: string): unknown;
}

const VARIABLE = /^\$([A-Za-z_][A-Za-z0-9_]*)(.*)$/s;

/** The value at `path`, or `undefined` when it matches nothing. */
export function queryPath(path: string, data: unknown, sources: PathSources): unknown {
  if (path.startsWith('$$')) return select(`$${path.slice(2)}`, sources.context);
  const variable = VARIABLE.exec(path);
  if (variable) {
    const [, name = '', rest = ''] = variable;
    const value = sources.variable(name);
    return value === undefined ? undefined : select(`$${rest}`, value);
  }
  return select(path, data);
}

/** The value at `path`; fails the state when the path matches nothing. */
export function readPath(path: string, data: unknown, sources: PathSources, field: string): unknown {
  const value = queryPath(path, data, sources);
  if (value === undefined) {
    throw new TaskError('States.Runtime', `Invalid path '${path}' : No results for path: ${field}`);
  }
  return value;
}

/** InputPath and OutputPath: null discards the data, an absent path keeps all of it. */
export function applyPath(path: unknown, data: unknown, sources: PathSources, field: string): unknown {
  if (path === null) return {};
  if (path === undefined) return data;
  return readPath(String(path), data, sources, field);
}

/** A payload template (Parameters, ResultSelector, ItemSelector, Assign): `key.$` reads a path or calls an intrinsic. */
export function applyTemplate(template: unknown, data: unknown, sources: PathSources): unknown {
  if (Array.isArray(template)) return template.map((item) => applyTemplate(item, data, sources));
  if (typeof template !== 'object' || template === null) return template;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(template)) {
    if (!key.endsWith('.$')) {
      result[key] = applyTemplate(value, data, sources);
      continue;
    }
    const name = key.slice(0, -2);
    const text = String(value);
    result[name] = text.startsWith('States.') ? evaluateIntrinsic(text, (path) => readPath(path, data, sources, key)) : readPath(text, data, sources, key);
  }
  return result;
}

/** ResultPath: null keeps the input, `$` replaces it, `$.a.b` puts the result there in a copy. */
export function applyResultPath(path: unknown, input: unknown, result: unknown): unknown {
  if (path === null) return input;
  if (path === undefined || path === '$') return result;
  const keys = referencePathKeys(String(path));
  const output = structuredClone(input ?? {});
  if (typeof output !== 'object' || output === null) {
    throw new TaskError('States.Runtime', `Unable to apply ResultPath '${String(path)}' to input ${JSON.stringify(input)}`);
  }
  let node = output as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys.at(-1) ?? ''] = result;
  return output;
}

function referencePathKeys(path: string): string[] {
  const keys = [...path.slice(1).matchAll(/\.([^.[\]]+)|\['([^']+)'\]/g)].map(([, dotted, quoted = '']) => dotted ?? quoted);
  if (!path.startsWith('$') || keys.length === 0) throw new TaskError('States.Runtime', `Invalid ResultPath '${path}'`);
  return keys;
}

function select(path: string, json: unknown): unknown {
  if (path === '$') return json;
  if (json === null || json === undefined || typeof json !== 'object') return undefined;
  return JSONPath({ path, json: json as object, wrap: false });
}
