/**
 * No module imports itself back, through any chain, type imports included: each shared type
 * belongs to the module that owns its concept, and a module that needs a caller's behaviour
 * takes it as a parameter instead of importing the caller.
 */
import { resolve } from 'node:path';
import { parseCircular, parseDependencyTree, prettyCircular } from 'dpdm';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');
const SOURCES = ['lambdas/**/*.ts', 'local/**/*.ts', 'client/**/*.ts', 'cdk/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'];

describe('import cycles', () => {
  it('no source module takes part in an import cycle, type imports included', async () => {
    // `transform: false` keeps type-only imports in the graph: a type cycle is a cycle of concepts.
    const tree = await parseDependencyTree(SOURCES, { cwd: root, context: root, transform: false, skipDynamicImports: false });
    expect(Object.keys(tree).length, 'the globs matched the source files').toBeGreaterThan(100);
    const cycles = parseCircular(tree);
    expect(cycles, `import cycles:\n${prettyCircular(cycles)}`).toEqual([]);
  }, 20_000);
});
