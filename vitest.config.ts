import { defineConfig } from 'vitest/config';
import { PACKAGE_SOURCES_ALIAS, SOURCE_CONDITION_FLAG } from './test/support/sourceCondition.ts';

export default defineConfig({
  resolve: { alias: PACKAGE_SOURCES_ALIAS },
  test: {
    globalSetup: ['test/support/globalSetup.ts'],
    setupFiles: ['test/support/workerLog.ts'],
    include: ['test/**/*.test.ts'],
    // `npm run test:cluster` brings its own Temporal cluster; `npm run test:system` runs the long fault tests.
    exclude: ['test/cluster/**', 'test/system/**', '**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    execArgv: [SOURCE_CONDITION_FLAG],
  },
});
