/**
 * The local runtime runs every state machine on its own ASL interpreter; aws-local-stepfunctions
 * is only the reference the tests hold it against (reference-engine.ts), so nothing outside
 * test/ imports it and it is a devDependency.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');
const SOURCE_DIRS = ['lambdas', 'local', 'client', 'cdk', 'bench', 'scripts'];
const IMPORTS_LIBRARY = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"]aws-local-stepfunctions['"]/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(?:ts|mts|mjs|js|cjs)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('one ASL engine at run time', () => {
  it('no module outside test/ imports aws-local-stepfunctions', () => {
    const files = SOURCE_DIRS.flatMap((dir) => sourceFiles(join(root, dir)));
    expect(files.length, 'the source folders were read').toBeGreaterThan(100);
    const importers = files.filter((file) => IMPORTS_LIBRARY.test(readFileSync(file, 'utf8'))).map((file) => relative(root, file));
    expect(importers).toEqual([]);
  });

  it('aws-local-stepfunctions is a devDependency, not installed with the runtime dependencies', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    expect(manifest.dependencies?.['aws-local-stepfunctions']).toBeUndefined();
    expect(manifest.devDependencies?.['aws-local-stepfunctions']).toBeDefined();
  });
});
