/**
 * vitest globalSetup: the CLI's sources bundled once per run (esbuild, as the package's build
 * does), so each CLI process a test spawns loads one module: no TypeScript loader, and no module
 * hook thread in front of its imports. The bundle lives in the project's cache. It is run as a
 * file of its own, yet behaves as `client/cli.ts` does in a clone: it names that file as its
 * entry (`process.argv[1]`, which the CLI's hints are worded from), and each module keeps its own
 * `import.meta` (the paths it finds beside itself).
 */
import { mkdirSync, renameSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { CLI_BUNDLE, CLI_SOURCE } from './bundle-path.ts';

const REPO = resolve(import.meta.dirname, '../../..');

/** Each of our modules' `import.meta.url`, `dirname` and `filename`, as its source file has them. */
const importMetaOfEachModule: Plugin = {
  name: 'import-meta-of-each-module',
  setup(bundle) {
    bundle.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta')) return undefined;
      const contents = source
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path));
      return { contents, loader: /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js', resolveDir: dirname(args.path) };
    });
  },
};

export default async function setup(): Promise<void> {
  mkdirSync(dirname(CLI_BUNDLE), { recursive: true });
  // Another run may be reading the bundle: write beside it, then swap it in.
  const partial = `${CLI_BUNDLE}.${process.pid}.partial`;
  await build({
    entryPoints: [CLI_SOURCE],
    outfile: partial,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    tsconfig: join(REPO, 'tsconfig.json'),
    // Before any module of ours runs (the packages it imports are loaded first, and read no argv).
    banner: { js: `process.argv[1] = ${JSON.stringify(CLI_SOURCE)};` },
    plugins: [importMetaOfEachModule],
    logLevel: 'warning',
  });
  renameSync(partial, CLI_BUNDLE);
}
