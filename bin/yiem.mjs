#!/usr/bin/env node
// The compiled CLI (`npm run build`, run by `npm ci` and `npm pack`); tsx is loaded only for .ts tool files.
const main = new URL('../dist/src/cli/main.js', import.meta.url);
try {
  await import(main.href);
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(main.pathname)) throw error;
  console.error('yiem: the CLI is not built yet (no dist/): run `npm run build`');
  process.exitCode = 1;
}
