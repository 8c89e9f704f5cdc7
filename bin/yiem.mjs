#!/usr/bin/env node
// The CLI and the tools it loads are TypeScript; tsx compiles them on the fly.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
