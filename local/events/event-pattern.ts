/**
 * EventBridge event-pattern matching, for the patterns the local event bus applies:
 * exact values only. Every field the pattern names must be in the event; a field whose
 * pattern is an array matches when the event's value (or, for an array value, any of its
 * elements) equals one of the array's values; a field whose pattern is an object matches
 * the event's object field by field. Fields the pattern leaves out match anything.
 * A `{ "prefix": "..." }` item matches a string value that starts with it. Other content filters
 * (`anything-but`, `numeric`, `exists`, ...) are refused when the pattern is checked, so a
 * pattern the local bus cannot apply fails loudly instead of forwarding what AWS would not.
 */
import { isObject } from '../../lambdas/shared/json-values.ts';

type ExactValue = string | number | boolean | null;
type PatternValue = ExactValue | { prefix: string };

/** An EventBridge event pattern made of exact values and prefix filters. */
export interface EventPattern {
  [field: string]: readonly PatternValue[] | EventPattern;
}

/** Throws naming the first part of `pattern` that is not an exact-value EventBridge pattern. */
export function checkEventPattern(pattern: unknown, path = ''): asserts pattern is EventPattern {
  if (!isObject(pattern)) throw new Error(`event pattern${path ? ` at ${path}` : ''} must be an object`);
  for (const [field, value] of Object.entries(pattern)) {
    const at = path ? `${path}.${field}` : field;
    if (Array.isArray(value)) {
      // EventBridge refuses an empty array: it would match nothing.
      if (value.length === 0) throw new Error(`event pattern at ${at} is an empty array`);
      for (const item of value) {
        const prefix = isObject(item) && Object.keys(item).length === 1 && typeof item.prefix === 'string';
        if ((isObject(item) && !prefix) || Array.isArray(item)) {
          throw new Error(`event pattern at ${at} uses a content filter, which the local event bus does not apply`);
        }
      }
    } else if (isObject(value)) {
      checkEventPattern(value, at);
    } else {
      throw new Error(`event pattern at ${at} must be an array of values or an object`);
    }
  }
}

/** Whether `event` matches `pattern`, as an EventBridge rule would decide it. */
export function matchesEventPattern(pattern: EventPattern, event: unknown): boolean {
  if (!isObject(event)) return false;
  for (const [field, expected] of Object.entries(pattern)) {
    if (!Object.hasOwn(event, field)) return false;
    const actual = event[field];
    if (Array.isArray(expected)) {
      const candidates = Array.isArray(actual) ? actual : [actual];
      const matches = (value: PatternValue, candidate: unknown) =>
        isObject(value) ? typeof candidate === 'string' && candidate.startsWith(value.prefix) : value === candidate;
      if (!candidates.some((candidate) => expected.some((value) => matches(value, candidate)))) return false;
    } else if (!matchesEventPattern(expected as EventPattern, actual)) {
      return false;
    }
  }
  return true;
}
