import { defaultServerConditions } from 'vite';

/**
 * The package's `yiem-source` export condition: files that import `yiem-agent` by name (the built-in
 * tools, as a user's tool does) get the sources instead of the build in dist/, in the test run and in
 * every process it starts (NODE_OPTIONS is inherited).
 */
export const SOURCE_CONDITION = 'yiem-source';

export function useSourcesForPackageImports(): { conditions: string[] } {
  const flag = `--conditions=${SOURCE_CONDITION}`;
  const current = process.env.NODE_OPTIONS ?? '';
  if (!current.includes(flag)) process.env.NODE_OPTIONS = `${current} ${flag}`.trim();
  return { conditions: [SOURCE_CONDITION, ...defaultServerConditions] };
}
