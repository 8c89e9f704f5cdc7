/** What the `survey` tool of storeWorker.ts returns for `site`: 1 MB that names it, the same on every worker. */
export const surveyText = (site: string): string => `survey of ${site}: ${'s'.repeat(1_000_000)}`;
