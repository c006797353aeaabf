/**
 * The package's build (`npm run build`, run by `npm pack`): ESM JavaScript for Node 20+ in
 * dist/, one module per source module, at the source's path (client/index.ts ->
 * dist/client/index.js), with the npm dependencies left as imports. Keeping the layout keeps
 * every path a module finds beside itself (import.meta.url) right: the local stack's worker
 * folder, DynamoDB's child process, the card's sources. The files those modules read are copied
 * beside them. Type declarations come from the compiler (tsconfig.build.json), in dist/types.
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';
import { buildOperationCardHtml } from './lambdas/mcp/apps/build-operation-card.ts';
import { CARD_ASSET_FILE } from './lambdas/mcp/apps/card-resource.ts';

/** What the package runs: the client, the server's code, the local stack, the construct, the test kit and the bin's commands. */
const SOURCES = [
  'client/**/*.ts',
  'lambdas/**/*.ts',
  'local/**/*.ts',
  'cdk/**/*.ts',
  'testing/**/*.ts',
  'scripts/init-project.ts',
  'scripts/project-template.ts',
  'scripts/new-tool.ts',
  'scripts/new-tool-test-file.ts',
  'scripts/validate-tools.ts',
  // The repository's own CDK app (it runs cdk-nag); a user's project has its own.
  '!cdk/app.ts',
  // The card's browser script is bundled from source when the card is built (build-operation-card.ts).
  '!lambdas/mcp/apps/operation-card/**',
];

/**
 * Files read beside the modules at run time, copied to the same place in dist: the local
 * stack's child processes, init's templates, and the sources the card's browser script is
 * bundled from when a synth builds the card (operation-card/ and the module it imports values from).
 */
const ASSETS = [
  'local/dynamodb/dynalite-process.mjs',
  'local/lambda/lambda-sandbox.mjs',
  'local/lambda/runtime-modules-hook.mjs',
  'local/fresh-modules-hook.mjs',
  'lambdas/mcp/apps/operation-card',
  'lambdas/mcp/apps/card-tool-schemas.ts',
  'templates',
];

/**
 * Each module compiled alone: an import of another module stays an import, of its compiled
 * name (`./x.ts` -> `./x.js`), and packages stay imports, as the sources have them.
 */
const moduleByModule: Plugin = {
  name: 'module-by-module',
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      return { path: args.path.startsWith('.') ? args.path.replace(/\.ts$/, '.js') : args.path, external: true };
    });
  },
};

export default defineConfig({
  entry: SOURCES,
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  outDir: 'dist',
  esbuildOptions(options) {
    options.outbase = '.';
  },
  esbuildPlugins: [moduleByModule],
  splitting: false,
  clean: true,
  removeNodeProtocol: false,
  // Users debug their own code; ours ships readable, unminified.
  minify: false,
  sourcemap: false,
  async onSuccess() {
    for (const asset of ASSETS) await cp(asset, join('dist', asset), { recursive: true });
    // The card's HTML, built once here, where card-resource.js reads it instead of building it at the first read.
    const card = join('dist', 'lambdas', 'mcp', 'apps', CARD_ASSET_FILE);
    await mkdir(dirname(card), { recursive: true });
    await writeFile(card, buildOperationCardHtml());
  },
});
