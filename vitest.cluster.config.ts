import { defineConfig } from 'vitest/config';
import { PACKAGE_SOURCES_ALIAS, SOURCE_CONDITION_FLAG } from './test/support/sourceCondition.ts';

/** `npm run test:cluster`: the tests against a real multi-node Temporal cluster (test/cluster/). */
export default defineConfig({
  resolve: { alias: PACKAGE_SOURCES_ALIAS },
  test: {
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Each file starts its own cluster on the same ports.
    fileParallelism: false,
    execArgv: [SOURCE_CONDITION_FLAG],
  },
});
