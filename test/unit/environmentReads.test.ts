import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The product's code: what runs for a user (the console's page runs in a browser, with no environment).
 * Not `tools/`: a tool file is its own edge, as a user's tool is (getWeather reads its endpoints' variables).
 */
const PRODUCT = ['src', 'activities', 'workflows', 'bin'];
/** Where the process environment is read: the one reader the role readers share. */
const READERS = new Set(['src/infrastructure/environment.ts']);
/** Each process role reads its environment in one file, through that reader. */
const ROLE_READERS = ['src/worker/environment.ts', 'src/client/environment.ts', 'src/cli/environment.ts'];

function productFiles(): string[] {
  return PRODUCT.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.(ts|mts|mjs|cjs)$/.test(file) && !file.startsWith(`console${path.sep}`))
      .map((file) => path.posix.join(dir, file.split(path.sep).join('/'))),
  );
}

/** `process.env` outside comments: a read (or a write) of the process environment. */
function readsProcessEnv(source: string): boolean {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return /\bprocess\.env\b/.test(code);
}

it('reads process.env only in src/infrastructure/environment.ts', () => {
  const files = productFiles();
  expect(files.length).toBeGreaterThan(100);
  const readers = files.filter((file) => readsProcessEnv(readFileSync(path.join(ROOT, file), 'utf8')));
  expect(readers).toEqual([...READERS]);
});

it('has one environment reader per process role, each through the shared reader', () => {
  for (const file of ROLE_READERS) {
    expect(readFileSync(path.join(ROOT, file), 'utf8')).toContain('processEnvironment()');
  }
});
