import { defineConfig } from 'vitest/config';

/** `npm run test:cluster`: the tests against a real multi-node Temporal cluster (test/cluster/). */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
