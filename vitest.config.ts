import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The durable tool helpers under the name a tool imports them by, as tsconfig.json's paths give it to tsc, tsx and esbuild.
  resolve: { alias: { 'async-mcp/durable': fileURLToPath(new URL('./lambdas/durable/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each end-to-end file starts its own local stack; two cores is the machine size.
    maxWorkers: 2,
    // The run has a temp dir of its own and fails if anything of ours is left in it; on Node 20
    // it says so in one line instead of every worker's AWS SDK and oidc-provider warnings.
    globalSetup: ['test/support/temp-dir-guard.ts', 'test/support/node-version-setup.ts'],
    setupFiles: ['test/support/quiet-node-20.ts'],
  },
});
