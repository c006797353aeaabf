/**
 * What an entry module loads before any of its code runs: every module of ours and every package
 * it imports statically, through any chain of our own modules (esbuild's metafile). A dynamic
 * `import()` is not followed, so a test can hold that a costly package waits until it is needed.
 */
import { join, resolve } from 'node:path';
import { build, type Metafile } from 'esbuild';

const REPO = resolve(import.meta.dirname, '../..');

export async function staticImports(entry: string): Promise<{ modules: Set<string>; packages: Set<string> }> {
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
