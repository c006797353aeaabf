import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

// vitest hands `--exclude` to the root config only, never to an inline project: read here, it
// keeps `vitest run test/e2e/as-deployed/ durable --exclude 'test/cdk/**'` (CI's Node 24 pass) as it was.
const cliExclude = process.argv.flatMap((arg, i, all) => {
  if (arg === '--exclude') return all[i + 1] === undefined ? [] : [all[i + 1] as string];
  return arg.startsWith('--exclude=') ? [arg.slice('--exclude='.length)] : [];
});

// What every project shares: a project that does not extend the root inherits nothing of it.
const shared = {
  // The durable tool helpers under the name a tool imports them by, as tsconfig.json's paths give it to tsc, tsx and esbuild.
  resolve: { alias: { 'async-mcp/durable': fileURLToPath(new URL('./lambdas/durable/index.ts', import.meta.url)) } },
  testTimeout: 60_000,
  hookTimeout: 60_000,
  setupFiles: ['test/support/quiet-node-20.ts'],
};

export default defineConfig({
  test: {
    // Two cores is the machine size. A stack file spends much of its time waiting (a poll
    // interval, a tool's bound, a spawned process), so more files at a time use that time: once
    // a local stack's start and a synth cost less CPU, four workers ran the suite in 644 s
    // against three's 783 s (with a synth), and a fifth no faster (650 s, CPU-bound at 180%).
    maxWorkers: 4,
    // Here only, not in the projects: a project's globalSetup runs once more for it. The run has
    // a temp dir of its own and fails if anything of ours is left in it; on Node 20 it says so
    // in one line instead of every worker's AWS SDK and oidc-provider warnings; the CLI the tests
    // spawn is bundled once.
    globalSetup: ['test/support/temp-dir-guard.ts', 'test/support/node-version-setup.ts', 'test/support/cli-bundle/build.ts'],
    projects: [
      {
        resolve: shared.resolve,
        test: {
          ...shared,
          // Template tests: each file builds its own App, so the files of a worker share one
          // load of aws-cdk-lib (it was most of their time); a process each, for synth's spawns.
          name: 'cdk',
          include: ['test/cdk/**/*.test.ts'],
          setupFiles: [...shared.setupFiles, 'test/cdk/remove-app-outdirs.ts'],
          exclude: [...configDefaults.exclude, ...cliExclude],
          isolate: false,
        },
      },
      {
        resolve: shared.resolve,
        test: {
          ...shared,
          // Files that start local stacks, spawn processes or synthesize. The files of a worker
          // share its process and module graph: a fresh process each loaded the local stack's
          // modules again for every file (about 3 s of CPU, most of these files' own). So a file
          // closes what it starts and restores what it changes (process.env, fake timers), as
          // every file here does. Named to sort before "unit": the default sequencer runs
          // projects in name order ("cdk", "stack", "unit"), so the long files start first and
          // the short unit files fill the end.
          name: 'stack',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...cliExclude, 'test/unit/**', 'test/cdk/**'],
          isolate: false,
        },
      },
      {
        resolve: shared.resolve,
        test: {
          ...shared,
          // The core over in-memory ports: no file changes what another imports, so the files of
          // a worker share one module graph (loading it per file cost more than the tests).
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...cliExclude],
          pool: 'threads',
          isolate: false,
        },
      },
    ],
  },
});
