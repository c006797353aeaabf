/**
 * The questions a running call asks its client (elicitation, form mode), the answers a
 * caller gives, and the check an answer passes before it is sent: its content must fit the
 * question's requested schema, so a wrong answer is refused here, naming the field, instead
 * of reaching the server.
 */
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema';

/** An open question a running call asks its client (elicitation, form mode). */
export interface Question {
  /** The dialect's name for it: the Tasks extension's inputRequests key; for SEP-1391 and 2025-11-25 a key derived from the server's request (stable across polls). */
  key: string;
  message: string;
  /** The elicitation's requestedSchema: { type: 'object', properties, required? }. */
  requestedSchema: RequestedSchema;
}

/** A form-mode elicitation's schema: a flat object of primitive properties. */
export interface RequestedSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  [k: string]: unknown;
}

/** What the client answers: accept with content, decline, or cancel (the elicitation's `ElicitResult`). */
export type Answer = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' };

/** An answer that does not fit the question's requestedSchema; `field` names the failing property. */
export class InvalidAnswerError extends Error {
  /** The property that failed, or `undefined` when the content as a whole did (not an object, an unknown action). */
  readonly field: string | undefined;
  /** The key of the question it answers. */
  readonly question: string;
  constructor(question: string, field: string | undefined, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidAnswerError';
    this.question = question;
    this.field = field;
  }
}

const ACTIONS = new Set(['accept', 'decline', 'cancel']);
const validators = new WeakMap<object, Validator>();

/** Throws InvalidAnswerError naming the field when an accept's content does not fit the schema (types, required, enum, min/max, string formats). */
export function checkAnswer(question: Question, answer: Answer): void {
  const action: unknown = (answer as { action?: unknown } | undefined)?.action;
  if (typeof action !== 'string' || !ACTIONS.has(action))
    throw new InvalidAnswerError(question.key, undefined, `The answer to "${question.key}" must be accept, decline or cancel, not ${JSON.stringify(action)}`);
  if (answer.action !== 'accept') return;
  const content: unknown = answer.content;
  if (typeof content !== 'object' || content === null || Array.isArray(content))
    throw new InvalidAnswerError(question.key, undefined, `The answer to "${question.key}" must accept with an object of fields`);
  const result = validatorFor(question.requestedSchema).validate(content);
  if (result.valid) return;
  const failure = firstLeaf(result.errors);
  const field = failure ? fieldOf(failure) : undefined;
  const reason = failure ? reasonOf(failure) : 'does not fit the requested schema';
  throw new InvalidAnswerError(
    question.key,
    field,
    field === undefined ? `The answer to "${question.key}" ${reason}` : `The answer to "${question.key}" does not fit field "${field}": ${reason}`,
  );
}

function validatorFor(schema: RequestedSchema): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    // The elicitation schema's string formats (email, uri, date, date-time) are asserted: the
    // spec lists them as the formats a client may be asked for. Drafts other than 2020-12 are
    // not used by requestedSchema.
    validator = new Validator(schema as Schema, '2020-12', false);
    validators.set(schema, validator);
  }
  return validator;
}

/** The most specific failure: the one deepest in the instance, else the first that is not only a summary of others. */
function firstLeaf(errors: OutputUnit[]): OutputUnit | undefined {
  const summaries = new Set(['properties', 'allOf', 'anyOf', 'oneOf', 'items', 'prefixItems', 'additionalProperties', '$ref']);
  const leaves = errors.filter((e) => !summaries.has(e.keyword));
  const pool = leaves.length > 0 ? leaves : errors;
  return pool.reduce<OutputUnit | undefined>((best, e) => (best === undefined || depth(e) > depth(best) ? e : best), undefined);
}

function depth(unit: OutputUnit): number {
  return unit.instanceLocation.split('/').length;
}

/** The top-level property a failure is about: the instance path's first segment, or a `required` failure's missing name. */
function fieldOf(unit: OutputUnit): string | undefined {
  const [, first] = unit.instanceLocation.split('/');
  if (first !== undefined && first !== '') return decodeURIComponent(first).replace(/~1/g, '/').replace(/~0/g, '~');
  if (unit.keyword === 'required' || unit.keyword === 'dependentRequired') return /"([^"]*)"/.exec(unit.error)?.[1];
  return undefined;
}

function reasonOf(unit: OutputUnit): string {
  if (unit.keyword === 'required' || unit.keyword === 'dependentRequired') return 'it is required';
  // cfworker words its errors "Instance does not match format ...", "Instance has no properties...": keep the reason only.
  return unit.error
    .replace(/^Instance (?:at "[^"]*" )?/, '')
    .replace(/\.$/, '')
    .replace(/^(?=does|has|is)/, 'the value ');
}
