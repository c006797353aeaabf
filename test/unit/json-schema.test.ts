import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { validateArguments } from '../../lambdas/mcp/calls/argument-validator.ts';
import { DefaultJsonSchemaValidator } from '../../lambdas/tools/default-json-schema-validator.ts';
import { compileSchema, errorsText, schemaProblem } from '../../lambdas/tools/json-schema.ts';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

// The engine before: Ajv 2020 without formats. Reports must name what it named.
const ajv = new Ajv2020({ strict: false, allErrors: true });

const calc = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' }, op: { type: 'string', enum: ['add', 'sub', 'mul', 'div'] } },
  required: ['a', 'b', 'op'],
  additionalProperties: false,
};
const deploy = {
  type: 'object',
  properties: {
    environment: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,63}$' },
    changes: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, minItems: 1, maxItems: 3 },
  },
  required: ['environment', 'changes'],
  additionalProperties: false,
};
const nested = {
  type: 'object',
  properties: {
    target: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer', minimum: 1, maximum: 65535 } }, required: ['host'] },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
  },
  additionalProperties: false,
};
const refs = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { year: { type: 'integer', minimum: 1900 } },
  properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { $ref: '#/$defs/year' }], items: false } },
  required: ['pair'],
};
const choices = {
  type: 'object',
  properties: {
    id: {
      anyOf: [
        { type: 'string', minLength: 3 },
        { type: 'integer', exclusiveMinimum: 0 },
      ],
    },
    ratio: { type: 'number', multipleOf: 0.5, exclusiveMaximum: 10 },
    'a/b': { type: 'boolean' },
    'with space': { const: 'x' },
  },
};

const cases: [string, object, unknown][] = [
  ['a wrong type', calc, { a: 'six', b: 7, op: 'mul' }],
  ['a missing property', calc, { a: 1, op: 'add' }],
  ['two missing properties', calc, { op: 'add' }],
  ['an extra property', calc, { a: 1, b: 2, op: 'add', c: 3 }],
  ['an extra property and a wrong type', calc, { a: 'x', b: 2, op: 'add', c: 3 }],
  ['a value outside the enum', calc, { a: 1, b: 2, op: 'pow' }],
  ['a wrong type on an enum property', calc, { a: 1, b: 2, op: 5 }],
  ['a pattern mismatch', deploy, { environment: 'Prod!', changes: ['x'] }],
  ['an empty array', deploy, { environment: 'prod', changes: [] }],
  ['too many items', deploy, { environment: 'prod', changes: ['a', 'b', 'c', 'd'] }],
  ['an item too short', deploy, { environment: 'prod', changes: ['ok', ''] }],
  ['an item of the wrong type', deploy, { environment: 'prod', changes: [1, 'x'] }],
  ['a nested missing property', nested, { target: { port: 80 } }],
  ['a nested value over its maximum', nested, { target: { host: 'h', port: 70000 } }],
  ['a nested integer given a fraction', nested, { target: { host: 'h', port: 1.5 } }],
  ['a root extra property beside a nested error', nested, { target: { port: 80 }, zz: 1 }],
  ['a wrong type under additionalProperties', nested, { tags: { a: 'x', b: 2 } }],
  ['a $ref minimum', refs, { pair: ['x', 1800] }],
  ['an item beyond prefixItems with items false', refs, { pair: ['x', 2020, 'extra'] }],
  ['no branch of anyOf', choices, { id: 'ab' }],
  ['a multipleOf and exclusiveMaximum', choices, { ratio: 10.25 }],
  ['a property name with a slash', choices, { 'a/b': 'yes' }],
  ['a const on a property name with a space', choices, { 'with space': 'y' }],
];

function ajvFirst(schema: object, value: unknown): ErrorObject | undefined {
  const validate = ajv.compile(schema);
  return validate(value) ? undefined : validate.errors![0];
}

describe('JSON Schema validation reports what Ajv reported', () => {
  it.each(cases)('%s: same validity, same first failure (path, keyword, message)', (_name, schema, value) => {
    const expected = ajvFirst(schema, value);
    const validate = compileSchema(schema);
    expect(validate(value)).toBe(expected === undefined);
    const first = validate.errors![0]!;
    expect({ instancePath: first.instancePath, keyword: first.keyword, message: first.message }).toEqual({
      instancePath: expected!.instancePath,
      keyword: expected!.keyword,
      message: expected!.message,
    });
    if (expected!.keyword === 'required') expect(first.missingProperty).toBe(expected!.params.missingProperty);
    if (expected!.keyword === 'additionalProperties') expect(first.additionalProperty).toBe(expected!.params.additionalProperty);
  });

  it('accepts what Ajv accepted, format being an annotation (a property named "format" is still checked)', () => {
    const schema = {
      type: 'object',
      properties: { email: { type: 'string', format: 'email' }, format: { type: 'string', enum: ['csv', 'json'] } },
    };
    const validate = compileSchema(schema);
    expect(validate({ email: 'not an address', format: 'csv' })).toBe(true);
    expect(validate({ format: 'xml' })).toBe(false);
    expect(validate.errors![0]).toMatchObject({ instancePath: '/format', keyword: 'enum' });
  });

  it('names the failing field of every shipped tool as before, for each of its properties given a wrong type', async () => {
    const folders = await loadToolFolders('state-machines', { checkDefinitions: false });
    for (const { config } of folders) {
      const tool = testTool({ name: config.name, inputSchema: config.inputSchema });
      for (const property of Object.keys((config.inputSchema as unknown as { properties: object }).properties)) {
        const args = { [property]: { wrong: true } };
        const result = validateArguments(tool, args);
        const expected = ajvFirst(config.inputSchema, args)!;
        const path = [...expected.instancePath.split('/').filter(Boolean), ...(expected.keyword === 'required' ? [expected.params.missingProperty] : [])];
        expect(result, `${config.name}.${property}`).toMatchObject({ ok: false, field: ['arguments', ...path].join('.') });
      }
    }
  });

  it('errorsText lists every failure as Ajv did: data<path> <message>', () => {
    const validate = compileSchema(refs);
    expect(validate({ pair: ['x', 1800] })).toBe(false);
    expect(errorsText(validate)).toBe('data/pair/1 must be >= 1900');
  });

  it('validates the schema itself only on request, naming what is wrong', () => {
    expect(schemaProblem(calc)).toBeUndefined();
    expect(schemaProblem({ type: 'object', properties: { a: { type: 'nonsense' } } })).toMatch(/schema is invalid/);
  });
});

describe('DefaultJsonSchemaValidator, the SDK validator of the Lambda bundle', () => {
  it('answers with the SDK validator shape', () => {
    const validate = new DefaultJsonSchemaValidator().getValidator<{ a: number }>(calc);
    expect(validate({ a: 1, b: 2, op: 'add' })).toEqual({ valid: true, data: { a: 1, b: 2, op: 'add' }, errorMessage: undefined });
    expect(validate({ a: 1, op: 'add' })).toEqual({ valid: false, data: undefined, errorMessage: "data must have required property 'b'" });
  });
});
