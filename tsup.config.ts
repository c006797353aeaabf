/**
 * The package's build (`npm run build`, run by `npm pack`): ESM JavaScript for Node 20+ in
 * dist/, one entry per export of package.json, with the npm dependencies left as imports.
 * Type declarations come from the compiler (tsconfig.build.json), beside it in dist/types.
 */
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    'client/index': 'client/index.ts',
    cli: 'client/cli.ts',
  },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  outDir: 'dist',
  splitting: true,
  clean: true,
  removeNodeProtocol: false,
  // Users debug their own code; ours ships readable, unminified.
  minify: false,
  sourcemap: false,
});
