import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** Node 20, from the npm registry through the same script CI uses for Node 22 and 24. */
let node20: string;

beforeAll(async () => {
  const { stdout } = await run('bash', [path.join(ROOT, 'scripts/node.sh'), '20', '--print']);
  node20 = path.join(stdout.trim(), 'node');
}, 120_000);

it('the yiem CLI on Node 20 says which Node it needs, with no stack trace, and exits 1', async () => {
  const failure = await run(node20, [path.join(ROOT, 'bin/yiem.mjs'), '--help']).then(
    () => undefined,
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  expect(failure?.code).toBe(1);
  expect(failure?.stdout).toBe('');
  expect(failure?.stderr.trim()).toMatch(
    /^yiem: yiem-agent needs Node\.js 22\.12 or later \(Node 22 or 24 LTS\); this is Node 20\.\d+\.\d+\. Install Node 24 \(https:\/\/nodejs\.org, or nvm install 24\) and run it again\.$/,
  );
});

it('npm on Node 20 warns at install that the package wants Node 22 or 24', async () => {
  const project = await mkdtemp(path.join(os.tmpdir(), 'yiem-old-node-'));
  try {
    await writeFile(path.join(project, 'package.json'), '{"name":"old-node-user","version":"1.0.0"}');
    const { stderr } = await run('npm', ['install', '--dry-run', '--no-audit', '--no-fund', ROOT], {
      cwd: project,
      env: { ...process.env, PATH: `${path.dirname(node20)}:${process.env.PATH}` },
    });
    expect(stderr).toContain('EBADENGINE');
    expect(stderr).toContain("required: { node: '^22.12.0 || >=24.0.0' }");
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});
