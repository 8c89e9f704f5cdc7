#!/usr/bin/env node
// The compiled CLI (`npm run build`, run by `npm ci` and `npm pack`); tsx is loaded only for .ts tool files.
const dist = new URL('../dist/src/', import.meta.url);
const main = new URL('cli/main.js', dist);
try {
  // First, alone: it imports nothing, so an old Node gets a sentence instead of a stack trace.
  const { unsupportedNodeProblem } = await import(new URL('infrastructure/nodeVersion.js', dist).href);
  const problem = unsupportedNodeProblem();
  if (problem) {
    console.error(`yiem: ${problem}`);
    process.exit(1);
  }
  await import(main.href);
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(dist.pathname)) throw error;
  console.error('yiem: the CLI is not built yet (no dist/): run `npm run build`');
  process.exitCode = 1;
}
