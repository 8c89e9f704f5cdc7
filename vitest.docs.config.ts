import { defineConfig } from 'vitest/config';

/**
 * The checks of the docs that need no Temporal server, for `npm run docs:check` (scripts/docsCheck.mjs):
 * docs/configuration.md against the variables and options the code reads. `npm test` runs them too.
 */
export default defineConfig({
  test: {
    include: ['test/unit/configurationReference.test.ts'],
    pool: 'forks',
  },
});
