/**
 * `npm start` loads the as-deployed runtime (the assembly reader, its CloudFormation resolver,
 * the Lambda sandboxes) only for --cdk-out or --as-deployed: a plain start never runs it, and
 * loading it was a tenth of the start's CPU.
 */
import { join, resolve } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');

/** Every module and package `entry` imports statically, through any chain of its own modules. */
async function staticImports(entry: string): Promise<{ modules: Set<string>; packages: Set<string> }> {
  const { metafile } = await build({
    entryPoints: [join(REPO, entry)],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    tsconfig: join(REPO, 'tsconfig.json'),
    logLevel: 'silent',
    outdir: join(REPO, '.cache', 'unused'),
  });
  const inputs: Metafile['inputs'] = metafile.inputs;
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (modules.has(file)) return;
    modules.add(file);
    for (const imported of inputs[file]?.imports ?? []) {
      if (imported.kind !== 'import-statement') continue;
      if (imported.external) packages.add(imported.path);
      else visit(imported.path);
    }
  };
  visit(entry);
  return { modules, packages };
}

describe('npm start', () => {
  it('imports none of the as-deployed runtime statically: --cdk-out and --as-deployed load it when asked', async () => {
    const { modules, packages } = await staticImports('local/main.ts');
    expect(modules.has('local/local-stack.ts'), 'the walk follows the static imports').toBe(true);
    expect([...modules].filter((file) => /^local\/(as-deployed|assembly|lambda)\//.test(file))).toEqual([]);
    expect([...packages].filter((name) => name.startsWith('cfn-resolver-lib'))).toEqual([]);
  });
});
