import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { documentedExports, readmeSection } from './readme.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
/** What a worker entry would load: the native bridge, the sandbox, the validator. */
const WORKER_CODE = /node_modules\/(@temporalio\/(worker|core-bridge)|isolated-vm|ajv)\//;

let workDir: string;
let project: string;
let usage: string;

/** Runs a command in the installed project, as its user would. */
function inProject(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return run(command, args, { cwd: project, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
}

/** `npm pack`s the package (which builds it) and installs the tarball with the README's command. */
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-package-'));
  project = path.join(workDir, 'project');
  usage = await readmeSection(path.join(ROOT, 'README.md'), 'Use it in your project');
  await run('npm', ['pack', '--pack-destination', workDir], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  const tarball = (await readdir(workDir)).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack left no tarball in ${workDir}`);
  await run('mkdir', [project]);
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'my-agent', private: true, type: 'module' }),
  );
  const install = codeBlocks(usage, 'sh')[0]?.trim().split(/\s+/) ?? [];
  expect(install.slice(0, 3)).toEqual(['npm', 'install', 'yiem-agent']);
  const compiler = /`npm install (typescript@\S+ @types\/node@\S+)`/.exec(usage)?.[1]?.split(' ') ?? [];
  expect(compiler).toHaveLength(2);
  const packages = [path.join(workDir, tarball), ...install.slice(3), ...compiler];
  await inProject('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...packages]);
}, 600_000);

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('the installed package', () => {
  it('ships the build, the CLI and the README, and no tests, fixtures or benchmarks', async () => {
    const { stdout } = await inProject('find', ['node_modules/yiem-agent', '-type', 'f']);
    const files = stdout.trim().split('\n');
    expect(files).toContain('node_modules/yiem-agent/dist/src/index.js');
    expect(files).toContain('node_modules/yiem-agent/bin/yiem.mjs');
    expect(files.filter((file) => /\/(test|bench|fixtures)\/|\.test\./.test(file))).toEqual([]);
  });

  // Temporal's packages share protobufjs 8's registry of types: nested copies break the replay of JSON
  // histories. yiem-agent's peer dependency on it is what puts it above grpc's protobufjs 7.
  it('has one copy of protobufjs 8, shared by the Temporal packages', async () => {
    const { stdout } = await inProject('find', ['node_modules', '-path', '*/protobufjs/package.json']);
    const versions = await Promise.all(
      stdout
        .trim()
        .split('\n')
        .map(async (file) => JSON.parse(await readFile(path.join(project, file), 'utf8')).version as string),
    );
    expect(versions.filter((version) => version.startsWith('8.'))).toHaveLength(1);
  });

  it('imports every documented export of every entry with plain Node', async () => {
    const manifest = JSON.parse(
      await readFile(path.join(project, 'node_modules/yiem-agent/package.json'), 'utf8'),
    );
    const entries = Object.keys(manifest.exports as Record<string, unknown>)
      .filter((key) => key !== './package.json')
      .map((key) => `yiem-agent${key.slice(1)}`);
    const documented = documentedExports(usage);
    expect(Object.keys(documented).sort()).toEqual([...entries].sort());
    for (const entry of entries) {
      const { stdout } = await inProject(process.execPath, [
        '--input-type=module',
        '-e',
        `const m = await import('${entry}'); console.log(JSON.stringify(Object.keys(m)));`,
      ]);
      expect(JSON.parse(stdout), entry).toEqual(expect.arrayContaining(documented[entry] ?? []));
    }
  });

  it('loads no worker code for a client', async () => {
    const { stdout } = await inProject(process.execPath, [
      '--input-type=module',
      '-e',
      [
        "import { createRequire } from 'node:module';",
        'const start = performance.now();',
        "const { AgentClient } = await import('yiem-agent');",
        'const ms = performance.now() - start;',
        'const loaded = Object.keys(createRequire(import.meta.url).cache);',
        'console.log(JSON.stringify({ client: typeof AgentClient, ms, loaded }));',
      ].join('\n'),
    ]);
    const { client, ms, loaded } = JSON.parse(stdout) as { client: string; ms: number; loaded: string[] };
    console.log(`import { AgentClient } from 'yiem-agent': ${ms.toFixed(0)} ms`);
    expect(client).toBe('function');
    expect(loaded.some((file) => file.includes('@temporalio/client'))).toBe(true);
    expect(loaded.filter((file) => WORKER_CODE.test(file))).toEqual([]);
  });

  it("type-checks the README's agent.ts in a NodeNext project, and it runs a conversation", async () => {
    const [agent] = codeBlocks(usage, 'ts');
    expect(agent?.startsWith('// agent.ts\n')).toBe(true);
    await writeFile(path.join(project, 'agent.ts'), agent ?? '');
    await writeFile(path.join(project, 'tsconfig.json'), codeBlocks(usage, 'json')[0] ?? '');
    await inProject(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.']);
    const { stdout } = await inProject(process.execPath, ['dist/agent.js'], {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      YIEM_TASK_QUEUE: `package-${process.pid}-${Date.now()}`,
    });
    expect(stdout).toContain('completed: It is evening in Tokyo.');
  });

  it('runs the yiem CLI with npx', async () => {
    const { stdout } = await inProject('npx', ['--offline', 'yiem', '--help']);
    expect(stdout).toContain('Usage: yiem');
    expect(stdout).toMatch(/^\s+dev\b/m);
  });
});

/** The fenced code blocks of one language in a piece of Markdown. */
function codeBlocks(markdown: string, language: string): string[] {
  const fence = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  return [...markdown.matchAll(fence)].map((match) => match[1] ?? '');
}
