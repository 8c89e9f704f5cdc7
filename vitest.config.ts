import { defineConfig } from 'vitest/config';
import { useSourcesForPackageImports } from './test/support/sourceCondition.ts';

const resolve = useSourcesForPackageImports();

export default defineConfig({
  resolve,
  ssr: { resolve },
  test: {
    globalSetup: ['test/support/globalSetup.ts'],
    setupFiles: ['test/support/workerLog.ts'],
    include: ['test/**/*.test.ts'],
    // They bring their own Temporal cluster: `npm run test:cluster`.
    exclude: ['test/cluster/**', '**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
