import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each end-to-end file starts its own local stack; two cores is the machine size.
    maxWorkers: 2,
  },
});
