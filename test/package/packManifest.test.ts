import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/packManifest.mjs', import.meta.url));
const run = promisify(execFile);

const CHECKOUT_MANIFEST = `${JSON.stringify(
  {
    name: 'yiem-agent',
    version: '0.1.0',
    bin: { yiem: 'bin/yiem.mjs' },
    exports: {
      '.': {
        'yiem-source': './src/index.ts',
        types: './dist/src/index.d.ts',
        default: './dist/src/index.js',
      },
      './package.json': './package.json',
    },
    scripts: { prepare: 'node scripts/build.mjs', bench: 'tsx bench/run.ts' },
    dependencies: { ajv: '8.20.0' },
    peerDependencies: { '@temporalio/worker': '1.23.0' },
    devDependencies: { vitest: '4.1.12' },
    allowScripts: { esbuild: true },
  },
  null,
  2,
)}\n`;

describe('the packed package.json (prepack strip, postpack restore)', () => {
  let dir: string;
  const packManifest = (command: string) => run(process.execPath, [SCRIPT, command], { cwd: dir });
  const manifest = async () => readFile(path.join(dir, 'package.json'), 'utf8');

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-pack-manifest-'));
    await writeFile(path.join(dir, 'package.json'), CHECKOUT_MANIFEST);
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('ships no scripts, devDependencies, allowScripts or exports of the sources, and keeps what a user runs', async () => {
    await packManifest('strip');
    expect(JSON.parse(await manifest())).toEqual({
      name: 'yiem-agent',
      version: '0.1.0',
      bin: { yiem: 'bin/yiem.mjs' },
      exports: {
        '.': { types: './dist/src/index.d.ts', default: './dist/src/index.js' },
        './package.json': './package.json',
      },
      dependencies: { ajv: '8.20.0' },
      peerDependencies: { '@temporalio/worker': '1.23.0' },
    });
    await packManifest('restore');
    expect(await manifest()).toBe(CHECKOUT_MANIFEST);
    expect(await readdir(dir)).toEqual(['package.json']);
  });

  it("puts the checkout's package.json back after a pack that failed before postpack", async () => {
    await packManifest('strip');
    await packManifest('strip');
    await packManifest('restore');
    expect(await manifest()).toBe(CHECKOUT_MANIFEST);
  });
});
