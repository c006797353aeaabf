/**
 * One JSON Schema validator for the process. Creating an Ajv instance costs about
 * 100 ms (it compiles the meta-schemas), so it is made once, on first use, and
 * compiled schemas are cached per schema object.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

let ajv: Ajv2020 | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

function instance(): Ajv2020 {
  ajv ??= new Ajv2020({ strict: false, allErrors: true });
  return ajv;
}

/** The compiled validator for `schema`; throws when the schema itself is invalid. */
export function compileSchema(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = instance().compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

export function errorsText(validate: ValidateFunction): string {
  return instance().errorsText(validate.errors);
}
