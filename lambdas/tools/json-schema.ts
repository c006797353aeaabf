/**
 * JSON Schema validation for tool arguments and outputs, with `@cfworker/json-schema`:
 * an interpreter (no code generation), so a cold start compiles nothing and the Lambda
 * bundle carries one small validator. Errors are reported the way Ajv reports them
 * (instance path, keyword, message, the first one in Ajv's evaluation order), so the
 * field a client is told about does not depend on the engine.
 */
import { createRequire } from 'node:module';
import { Validator, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema';

/** One failed assertion: where in the instance, which keyword, and why (Ajv's wording). */
export interface SchemaError {
  /** JSON Pointer into the validated value, `''` for the value itself. */
  instancePath: string;
  keyword: string;
  message: string;
  /** For `required`: the missing property. */
  missingProperty?: string;
  /** For `additionalProperties: false`: the property that is not allowed. */
  additionalProperty?: string;
}

/** A compiled schema: true when `value` is valid; otherwise `errors` holds why, first failure first. */
export interface SchemaValidator {
  (value: unknown): boolean;
  errors: SchemaError[] | null;
}

const compiled = new WeakMap<object, SchemaValidator>();

/** The validator for `schema`, built once per schema object. */
export function compileSchema(schema: object): SchemaValidator {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = buildValidator(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Ajv's `errorsText`: `data/path message`, comma separated. */
export function errorsText(validate: SchemaValidator): string {
  return (validate.errors ?? []).map((error) => `data${error.instancePath} ${error.message}`).join(', ');
}

/**
 * Why `schema` is not a valid JSON Schema (checked against its meta-schema), or undefined.
 * For load-time checks of tool folders only: Ajv is loaded on the first call, never by the
 * deployed Lambda, which serves folders that synth already checked.
 */
export function schemaProblem(schema: object): string | undefined {
  try {
    metaValidator().compile(schema);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

interface MetaValidator {
  compile(schema: object): unknown;
}

let meta: MetaValidator | undefined;
const require = createRequire(import.meta.url);

function metaValidator(): MetaValidator {
  if (!meta) {
    // A runtime require, which esbuild leaves unbundled: Ajv stays out of the Lambda bundle.
    const { Ajv2020 } = require('ajv/dist/2020.js') as { Ajv2020: new (options: object) => MetaValidator };
    meta = new Ajv2020({ strict: false, allErrors: true });
  }
  return meta;
}

/** The draft `@cfworker/json-schema` should apply, from `$schema` (absent means 2020-12, per SEP-1613). */
function draftOf(schema: object): SchemaDraft {
  const declared = (schema as { $schema?: unknown }).$schema;
  if (typeof declared !== 'string') return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  if (/draft-0[67]/.test(declared)) return '7';
  if (declared.includes('draft-04')) return '4';
  return '2020-12';
}

function buildValidator(schema: object): SchemaValidator {
  // `format` is an annotation in 2020-12 unless a vocabulary asserts it; Ajv without
  // ajv-formats, which validated before, did not assert it either.
  const validator = new Validator(withoutFormats(schema) as Schema, draftOf(schema), false);
  const validate = ((value: unknown) => {
    const result = validator.validate(value);
    validate.errors = result.valid ? null : ajvOrder(leafErrors(result.errors, schema));
    return result.valid;
  }) as SchemaValidator;
  validate.errors = null;
  return validate;
}

// Keywords whose value is a map of subschemas, or an array of them.
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_VALUES = new Set([
  'not',
  'if',
  'then',
  'else',
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'contains',
]);

/** A copy of `schema` without `format` keywords (property names called "format" are kept). */
function withoutFormats(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'format') continue;
    if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null) {
      copy[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutFormats(sub)]));
    } else if ((SCHEMA_LISTS.has(key) || key === 'items') && Array.isArray(value)) {
      copy[key] = value.map(withoutFormats);
    } else if (SCHEMA_VALUES.has(key)) {
      copy[key] = withoutFormats(value);
    } else {
      copy[key] = value;
    }
  }
  return copy;
}

// Errors that only say "a subschema failed"; the failing assertion is reported after them.
const CONTAINERS = new Set([
  '$ref',
  '$recursiveRef',
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'unevaluatedItems',
  'allOf',
  'if',
  'dependentSchemas',
  'dependencies',
  'propertyNames',
]);

interface Leaf {
  error: SchemaError;
  /** Schema path of the assertion, to order it as Ajv would. */
  keywordPath: string[];
}

/** The failed assertions themselves, in Ajv's terms. */
function leafErrors(units: OutputUnit[], schema: object): Leaf[] {
  const leaves: Leaf[] = [];
  units.forEach((unit, index) => {
    if (CONTAINERS.has(unit.keyword)) return;
    const previous = units[index - 1];
    const instancePath = pointerOf(unit.instanceLocation);
    if (unit.keyword === 'false' && previous && (previous.keyword === 'additionalProperties' || previous.keyword === 'unevaluatedProperties')) {
      // `additionalProperties: false` is reported on the object, naming the property.
      const property = decodeSegment(unit.instanceLocation.split('/').at(-1) ?? '');
      const keyword = previous.keyword;
      const message = keyword === 'additionalProperties' ? 'must NOT have additional properties' : 'must NOT have unevaluated properties';
      leaves.push({
        error: { instancePath: pointerOf(previous.instanceLocation), keyword, message, additionalProperty: property },
        keywordPath: segmentsOf(previous.keywordLocation),
      });
      return;
    }
    if (unit.keyword === 'false' && previous?.keyword === 'items') {
      // `items: false` after `prefixItems` is reported on the array, as its length.
      const itemsPath = segmentsOf(previous.keywordLocation);
      const prefix = valueAt(schema, [...itemsPath.slice(0, -1), 'prefixItems']);
      const message = `must NOT have more than ${Array.isArray(prefix) ? prefix.length : 0} items`;
      leaves.push({ error: { instancePath: pointerOf(previous.instanceLocation), keyword: 'items', message }, keywordPath: itemsPath });
      return;
    }
    const keywordPath = unit.keyword === 'false' ? segmentsOf(previous?.keywordLocation ?? '#') : segmentsOf(unit.keywordLocation);
    leaves.push({ error: ajvError(unit, instancePath, valueAt(schema, keywordPath)), keywordPath });
  });
  // Every failure has an assertion under it; should an engine report none, say what it did.
  if (leaves.length === 0 && units[0]) leaves.push({ error: ajvError(units[0], pointerOf(units[0].instanceLocation), undefined), keywordPath: [] });
  return leaves;
}

function ajvError(unit: OutputUnit, instancePath: string, limit: unknown): SchemaError {
  const { keyword } = unit;
  const at = (message: string): SchemaError => ({ instancePath, keyword, message });
  switch (keyword) {
    case 'required': {
      const missingProperty = unit.error.match(/required property "(.*)"\.$/)?.[1] ?? '';
      return { ...at(`must have required property '${missingProperty}'`), missingProperty };
    }
    case 'type':
      return at(`must be ${Array.isArray(limit) ? limit.join(',') : String(limit)}`);
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return at(`must be ${COMPARISONS[keyword]} ${String(limit)}`);
    case 'multipleOf':
      return at(`must be multiple of ${String(limit)}`);
    case 'minLength':
    case 'minItems':
    case 'minProperties':
      return at(`must NOT have fewer than ${String(limit)} ${NOUNS[keyword]}`);
    case 'maxLength':
    case 'maxItems':
    case 'maxProperties':
      return at(`must NOT have more than ${String(limit)} ${NOUNS[keyword]}`);
    case 'pattern':
      return at(`must match pattern "${String(limit)}"`);
    case 'enum':
      return at('must be equal to one of the allowed values');
    case 'const':
      return at('must be equal to constant');
    case 'uniqueItems':
      return at('must NOT have duplicate items');
    case 'anyOf':
      return at('must match a schema in anyOf');
    case 'oneOf':
      return at('must match exactly one schema in oneOf');
    case 'not':
      return at('must NOT be valid');
    case 'false':
      return { instancePath, keyword: 'false schema', message: 'boolean schema is false' };
    default:
      return at(unit.error.replace(/\.$/, ''));
  }
}

const COMPARISONS: Record<string, string> = { minimum: '>=', maximum: '<=', exclusiveMinimum: '>', exclusiveMaximum: '<' };
const NOUNS: Record<string, string> = {
  minLength: 'characters',
  maxLength: 'characters',
  minItems: 'items',
  maxItems: 'items',
  minProperties: 'properties',
  maxProperties: 'properties',
};

/** The value at a schema path, following `$ref`s within the schema; undefined when it leaves it. */
function valueAt(root: unknown, path: string[]): unknown {
  let node = root;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    if (segment === '$ref') {
      const ref = (node as { $ref?: unknown }).$ref;
      node = typeof ref === 'string' && ref.startsWith('#') ? valueAt(root, segmentsOf(ref)) : undefined;
    } else {
      node = (node as Record<string, unknown>)[segment];
    }
  }
  return node;
}

// Ajv checks a schema's keywords in this order: the type, those for any type, then number,
// string, array and object keywords, then unevaluated*.
const AJV_RANK = new Map(
  [
    'type',
    '$ref',
    '$recursiveRef',
    'const',
    'enum',
    'not',
    'anyOf',
    'oneOf',
    'allOf',
    'if',
    'then',
    'else',
    'maximum',
    'minimum',
    'exclusiveMaximum',
    'exclusiveMinimum',
    'multipleOf',
    'maxLength',
    'minLength',
    'pattern',
    'maxItems',
    'minItems',
    'uniqueItems',
    'prefixItems',
    'items',
    'additionalItems',
    'contains',
    'maxProperties',
    'minProperties',
    'required',
    'dependentRequired',
    'propertyNames',
    'additionalProperties',
    'dependencies',
    'dependentSchemas',
    'properties',
    'patternProperties',
    'unevaluatedProperties',
    'unevaluatedItems',
  ].map((keyword, rank) => [keyword, rank]),
);

// Keywords followed in a schema path by a property name or an index, then a keyword again.
const NAMED = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'allOf', 'anyOf', 'oneOf', 'prefixItems']);

/**
 * Failures in the order Ajv finds them: keyword by keyword along each schema path, and
 * among siblings (properties, items, subschemas) in the order the schema lists them,
 * which is the order @cfworker/json-schema reported them in.
 */
function ajvOrder(leaves: Leaf[]): SchemaError[] {
  const firstSeen = new Map<string, number>();
  leaves.forEach((leaf, index) => {
    for (let depth = 1; depth <= leaf.keywordPath.length; depth++) {
      const prefix = leaf.keywordPath.slice(0, depth).join('/');
      if (!firstSeen.has(prefix)) firstSeen.set(prefix, index);
    }
  });
  const keyOf = (leaf: Leaf): number[] => {
    const key: number[] = [];
    let named = false;
    leaf.keywordPath.forEach((segment, depth) => {
      const next = leaf.keywordPath[depth + 1];
      if (named) {
        key.push(firstSeen.get(leaf.keywordPath.slice(0, depth + 1).join('/')) ?? 0);
        named = false;
        return;
      }
      key.push(AJV_RANK.get(segment) ?? AJV_RANK.size);
      named = NAMED.has(segment) || (segment === 'items' && next !== undefined && /^\d+$/.test(next));
    });
    return key;
  };
  // anyOf and oneOf are reported after the failures of their subschemas.
  const summary = (leaf: Leaf) => (leaf.error.keyword === 'anyOf' || leaf.error.keyword === 'oneOf' ? [Infinity] : []);
  const keyed = leaves.map((leaf, index) => ({ leaf, key: [...keyOf(leaf), ...summary(leaf), index] }));
  keyed.sort((a, b) => compareKeys(a.key, b.key));
  return keyed.map(({ leaf }) => leaf.error);
}

function compareKeys(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return a.length - b.length;
}

/** `#/a/0` → `/a/0` (a JSON Pointer, as Ajv's `instancePath`). */
function pointerOf(location: string): string {
  return location.replace(/^#/, '').split('/').map(decodeURIComponent).join('/');
}

function segmentsOf(location: string): string[] {
  return location.replace(/^#/, '').split('/').filter(Boolean).map(decodeSegment);
}

/** One segment of an encoded pointer, unescaped (`~1` is `/`, `~0` is `~`). */
function decodeSegment(segment: string): string {
  return decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
}
