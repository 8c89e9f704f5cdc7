// Builds the console's page (src/console/, React) with Vite into one folder of static files that
// work offline: every script and style is bundled, nothing loads from a CDN. `node
// scripts/buildConsole.mjs [outDir]` builds it alone (default dist/console); scripts/build.mjs calls it.
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const ROOT = fileURLToPath(new URL('../src/console/', import.meta.url));
const DEFAULT_OUT_DIR = fileURLToPath(new URL('../dist/console/', import.meta.url));

export async function buildConsole(outDir = DEFAULT_OUT_DIR) {
  await build({
    root: ROOT,
    configFile: false,
    logLevel: 'warn',
    // Asset paths relative to the page, so that it works wherever the console is mounted.
    base: './',
    oxc: { jsx: { runtime: 'automatic' } },
    build: {
      outDir,
      emptyOutDir: true,
      chunkSizeWarningLimit: 1024,
      rolldownOptions: {
        // `'use client'` in the AI SDK's React package means nothing outside a server-components framework.
        onwarn(warning, warn) {
          if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
        },
      },
    },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole(process.argv[2]);
