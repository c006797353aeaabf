/**
 * What the Lambda bundle gives `@modelcontextprotocol/server` in place of its runtime shims
 * (`@modelcontextprotocol/server/_shims`, aliased in cdk/lambda-bundling.ts). The SDK's Node
 * shim exports an Ajv-backed default validator, which would put a second JSON Schema engine
 * (about 150 KB minified) into the bundle; this one uses ours. The server never validates
 * with it anyway: the SDK's only uses are `Server.elicitInput` and `fromJsonSchema`, which
 * this server does not call.
 */
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';
import { compileSchema, errorsText } from './json-schema.ts';

export { default as process } from 'node:process';

/** The SDK's `jsonSchemaValidator`, backed by lambdas/tools/json-schema.ts. */
export class DefaultJsonSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const validate = compileSchema(schema);
    return (input: unknown) =>
      validate(input) ? { valid: true, data: input as T, errorMessage: undefined } : { valid: false, data: undefined, errorMessage: errorsText(validate) };
  }
}
