/**
 * `npm run fixtures:record`: records the whole set of replay fixtures again. It finds every test file
 * that calls `replayAndRecord(handle, 'name')`, deletes the committed fixtures, runs those files with
 * `YIEM_RECORD_HISTORIES=1` against a fresh dev server (vitest's global set-up; or the one at
 * `YIEM_TEST_TEMPORAL_ADDRESS`), checks that every
 * named fixture was written, and runs replay.test.ts on the new set. Exits non-zero on any failure.
 */
import { spawnSync } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = path.join(ROOT, 'test/fixtures/histories');
const TESTS = path.join(ROOT, 'test/integration');
const RECORDING_CALL = /replayAndRecord\([\s\S]*?,\s*'([^']+)'\s*\)/g;

function vitest(args: string[], env: NodeJS.ProcessEnv): void {
  const result = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', ...args],
    {
      cwd: ROOT,
      env,
      stdio: 'inherit',
    },
  );
  if (result.status !== 0) {
    console.error(`vitest failed: ${args.join(' ')}`);
    process.exit(result.status ?? 1);
  }
}

const recorders = new Map<string, string[]>();
for (const file of (await readdir(TESTS)).filter((name) => name.endsWith('.test.ts')).sort()) {
  const source = await readFile(path.join(TESTS, file), 'utf8');
  const names = [...source.matchAll(RECORDING_CALL)].map((match) => match[1] as string);
  if (names.length > 0) recorders.set(`test/integration/${file}`, names);
}
const expected = [...recorders.values()].flat().sort();
console.log(`Recording ${expected.length} fixtures from ${[...recorders.keys()].join(', ')}`);

for (const file of await readdir(FIXTURES)) {
  if (file.endsWith('.json')) await rm(path.join(FIXTURES, file));
}
// A test that fails once (a slow machine) runs again and records its fixture again.
vitest(['--retry=2', ...recorders.keys()], { ...process.env, YIEM_RECORD_HISTORIES: '1' });

const written = (await readdir(FIXTURES))
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -5));
const missing = expected.filter((name) => !written.includes(name));
if (missing.length > 0) {
  console.error(`Not recorded: ${missing.join(', ')}`);
  process.exit(1);
}
vitest(['test/integration/replay.test.ts'], { ...process.env, YIEM_RECORD_HISTORIES: '' });
console.log(`Recorded and replayed ${written.length} fixtures in test/fixtures/histories.`);
