// Compiles the package into dist/ (JavaScript and declarations) from a clean folder, so no file of an
// earlier build is shipped; tsc copies no CommonJS files, so the failure converter is copied here.
// The console's page is built by Vite into dist/console.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { buildConsole } from './buildConsole.mjs';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
copyFileSync(
  'src/infrastructure/codec/failureConverter.cjs',
  'dist/src/infrastructure/codec/failureConverter.cjs',
);
await buildConsole();
