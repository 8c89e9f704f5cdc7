import { defineConfig } from 'vitest/config';
import { useSourcesForPackageImports } from './test/support/sourceCondition.ts';

const resolve = useSourcesForPackageImports();

/** `npm run test:cluster`: the tests against a real multi-node Temporal cluster (test/cluster/). */
export default defineConfig({
  resolve,
  ssr: { resolve },
  test: {
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
