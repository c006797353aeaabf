/**
 * JSONPath Choice rules: `Variable` with a comparison operator (or its `…Path` form),
 * `And`, `Or` and `Not`. A comparison whose value has the wrong type is false, as in AWS.
 */
import { queryPath, readPath, type PathSources } from './asl-jsonpath.ts';

type Rule = Record<string, unknown>;

/** Whether `rule` matches `data`. */
export function matchesJsonPathRule(rule: Rule, data: unknown, sources: PathSources): boolean {
  if (Array.isArray(rule.And)) return (rule.And as Rule[]).every((inner) => matchesJsonPathRule(inner, data, sources));
  if (Array.isArray(rule.Or)) return (rule.Or as Rule[]).some((inner) => matchesJsonPathRule(inner, data, sources));
  if (rule.Not) return !matchesJsonPathRule(rule.Not as Rule, data, sources);
  const variable = String(rule.Variable);
  const value = queryPath(variable, data, sources);
  for (const [operator, operand] of Object.entries(rule)) {
    if (operator === 'Variable' || operator === 'Next' || operator === 'Comment' || operator === 'Assign') continue;
    if (operator === 'IsPresent') return (value !== undefined) === operand;
    if (value === undefined) return false;
    if (operator.startsWith('Is')) return typeTest(operator, value) === operand;
    const expected = operator.endsWith('Path') ? readPath(String(operand), data, sources, operator) : operand;
    return compare(operator.replace(/Path$/, ''), value, expected);
  }
  return false;
}

function typeTest(operator: string, value: unknown): boolean {
  switch (operator) {
    case 'IsNull':
      return value === null;
    case 'IsNumeric':
      return typeof value === 'number';
    case 'IsString':
      return typeof value === 'string';
    case 'IsBoolean':
      return typeof value === 'boolean';
    case 'IsTimestamp':
      return typeof value === 'string' && isTimestamp(value);
    default:
      return false;
  }
}

function compare(operator: string, value: unknown, expected: unknown): boolean {
  const kind = /^(String|Numeric|Boolean|Timestamp)/.exec(operator)?.[1];
  const relation = operator.slice(kind?.length ?? 0);
  if (kind === 'Boolean') return typeof value === 'boolean' && value === expected;
  if (kind === 'String') {
    if (typeof value !== 'string' || typeof expected !== 'string') return false;
    if (relation === 'Matches') return wildcard(expected).test(value);
    return relate(relation, value < expected ? -1 : value > expected ? 1 : 0);
  }
  if (kind === 'Numeric') {
    if (typeof value !== 'number' || typeof expected !== 'number') return false;
    return relate(relation, Math.sign(value - expected));
  }
  if (kind === 'Timestamp') {
    if (typeof value !== 'string' || typeof expected !== 'string' || !isTimestamp(value) || !isTimestamp(expected)) return false;
    return relate(relation, Math.sign(Date.parse(value) - Date.parse(expected)));
  }
  return false;
}

function relate(relation: string, order: number): boolean {
  switch (relation) {
    case 'Equals':
      return order === 0;
    case 'LessThan':
      return order < 0;
    case 'GreaterThan':
      return order > 0;
    case 'LessThanEquals':
      return order <= 0;
    case 'GreaterThanEquals':
      return order >= 0;
    default:
      return false;
  }
}

/** `*` matches any run of characters; `\*` and `\\` are literal. */
function wildcard(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern.charAt(i);
    if (char === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern.charAt(++i));
    else source += char === '*' ? '.*' : escapeRegExp(char);
  }
  return new RegExp(`^${source}$`, 's');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isTimestamp(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text));
}
