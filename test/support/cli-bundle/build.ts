/**
 * vitest globalSetup: the CLI's sources bundled once per run (esbuild, as the package's build
 * does), so each CLI process a test spawns loads one module instead of running every source
 * through tsx's loader: about half the CPU of a spawn. The bundle lives in the project's cache;
 * `register.mjs` serves it as `client/cli.ts` itself, so the process is entered as a clone's
 * `npm run cli` enters it and names itself the same way in its hints.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const REPO = resolve(import.meta.dirname, '../../..');
/** Where serve-bundle.mjs reads the bundle. */
const CLI_BUNDLE = join(REPO, '.cache', 'test-cli', 'cli.mjs');

export default async function setup(): Promise<void> {
  mkdirSync(join(CLI_BUNDLE, '..'), { recursive: true });
  // Another run may be reading the bundle: write beside it, then swap it in.
  const partial = `${CLI_BUNDLE}.${process.pid}.partial`;
  await build({
    entryPoints: [join(REPO, 'client', 'cli.ts')],
    outfile: partial,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    tsconfig: join(REPO, 'tsconfig.json'),
    logLevel: 'warning',
  });
  renameSync(partial, CLI_BUNDLE);
}
