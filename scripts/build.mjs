// Compiles the package into dist/ (JavaScript and declarations) from a clean folder, so no file of an
// earlier build is shipped; tsc copies no CommonJS files, so the failure converter is copied here.
// The console's page is built by Vite into dist/console.
//
// `--if-stale` (the `prepare` script) builds only when dist/ is missing or older than a source: npm
// runs `prepare` on `npm ci` and also on the first `npx yiem` in a checkout, which must not rebuild
// dist/ under a running CLI or test. `npm pack` (`prepack`) always builds.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { buildConsole } from './buildConsole.mjs';

/** Written last: its time is the build's, and a build that failed half-way has none. */
const STAMP = 'dist/.build-complete';
const SOURCES = [
  'src',
  'activities',
  'workflows',
  'tools',
  'scripts',
  'tsconfig.json',
  'tsconfig.build.json',
];

function newestSource(entry) {
  const stats = statSync(entry);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(entry).reduce(
    (newest, name) => Math.max(newest, newestSource(path.join(entry, name))),
    0,
  );
}

function upToDate() {
  if (!existsSync(STAMP)) return false;
  const built = statSync(STAMP).mtimeMs;
  return SOURCES.every((source) => !existsSync(source) || newestSource(source) <= built);
}

if (process.argv.includes('--if-stale') && upToDate()) process.exit(0);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
copyFileSync(
  'src/infrastructure/codec/failureConverter.cjs',
  'dist/src/infrastructure/codec/failureConverter.cjs',
);
await buildConsole();
writeFileSync(STAMP, '');
