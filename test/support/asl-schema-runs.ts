/**
 * Watches the Ajv that asl-validator's schemas run on (the one its package resolves): each run of
 * its state-machine schema, and each Ajv instance that ran it. An instance compiles the schemas
 * on its first run, so the instances are the compiles.
 */
import { createRequire } from 'node:module';

const STATE_MACHINE = 'http://asl-validator.cloud/state-machine.json#';
const require = createRequire(import.meta.url);
const Ajv = createRequire(require.resolve('asl-validator'))('ajv') as { prototype: { validate: (key: unknown, data: unknown) => unknown } };

export interface AslSchemaRuns {
  runs: number;
  instances: Set<object>;
  restore: () => void;
}

/** Counts from now until `restore`. */
export function watchAslSchemaRuns(): AslSchemaRuns {
  const original = Ajv.prototype.validate;
  const watch: AslSchemaRuns = { runs: 0, instances: new Set(), restore: () => (Ajv.prototype.validate = original) };
  Ajv.prototype.validate = function (this: object, key: unknown, data: unknown) {
    if (key === STATE_MACHINE) {
      watch.runs++;
      watch.instances.add(this);
    }
    return original.call(this, key, data);
  };
  return watch;
}
