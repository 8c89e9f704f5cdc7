#!/usr/bin/env node
// The compiled CLI (`npm run build`, run by `npm ci` and `npm pack`); tsx is loaded only for .ts tool files.
await import('../dist/src/cli/main.js');
