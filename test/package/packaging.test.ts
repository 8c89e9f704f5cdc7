import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SOURCE_CONDITION } from '../support/sourceCondition.ts';
import { documentedExports, readmeSection } from './readme.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
/** What a worker entry would load: the native bridge, the sandbox, the validator. */
const WORKER_CODE = /node_modules\/(@temporalio\/(worker|core-bridge)|isolated-vm|ajv)\//;

let workDir: string;
let project: string;
let usage: string;
let installOutput: string;
let checkoutManifest: string;
/** The copy of the checkout that `npm pack` runs in. */
let checkout: string;
/** What the package is built and packed from (tsconfig.build.json's sources, the scripts, the shipped files). */
const PACKED_FROM = [
  'package.json',
  'package-lock.json',
  'README.md',
  'tsconfig.json',
  'tsconfig.build.json',
  'bin',
  'scripts',
  'src',
  'activities',
  'workflows',
  'tools',
];

/** npm as the README's commands run here: from npm's cache where it can, without audit or funding notes. */
const NPM_FROM_CACHE = {
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
};

/** Runs a command in the installed project, as its user would. */
function inProject(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return run(command, args, { cwd: project, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
}

/**
 * What the README says, done: `npm pack` in this checkout (which builds the package), then the first
 * block's commands in a folder beside the tarball's, from `npm init -y` on. The project holds nothing
 * the README does not say.
 */
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-package-'));
  usage = await readmeSection(path.join(ROOT, 'README.md'), 'Use it in your project');
  checkoutManifest = await readFile(path.join(ROOT, 'package.json'), 'utf8');
  const { version } = JSON.parse(checkoutManifest) as { version: string };
  const tarball = `yiem-agent-${version}.tgz`;
  const prose = usage.replace(/\s+/g, ' ');
  expect(prose).toContain(`\`npm pack\` builds the package and writes \`${tarball}\``);
  expect(prose).toContain('(here the checkout is `../yiem-agent`)');
  const packed = path.join(workDir, 'yiem-agent');
  await mkdir(packed);
  checkout = await copyOfCheckout(path.join(workDir, 'checkout'));
  await run('npm', ['pack', '--pack-destination', packed], { cwd: checkout, maxBuffer: 16 * 1024 * 1024 });
  expect(await readdir(packed)).toEqual([tarball]);

  const setup = codeBlocks(usage, 'sh')[0] ?? '';
  const lines = setup.trim().split('\n');
  const folder = /^mkdir (\S+) && cd \1$/.exec(lines[0] ?? '')?.[1];
  expect(folder, 'the first line makes the project folder').toBeDefined();
  expect(lines[1]).toBe('npm init -y');
  expect(lines).toContain(`npm install ../yiem-agent/${tarball}`);
  project = path.join(workDir, folder ?? '');
  const { stdout, stderr } = await run('bash', ['-e', '-c', setup], {
    cwd: workDir,
    env: { ...process.env, ...NPM_FROM_CACHE },
    maxBuffer: 16 * 1024 * 1024,
  });
  installOutput = `${stdout}${stderr}`;
}, 600_000);

/**
 * What `npm pack` reads and builds from, copied from this checkout, with its node_modules linked: the
 * pack's build then writes the copy's dist/, never the one that the other tests and the CLI run.
 */
async function copyOfCheckout(copy: string): Promise<string> {
  for (const entry of PACKED_FROM)
    await cp(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  return copy;
}

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('npm pack', () => {
  it("leaves the checkout's package.json as it was", async () => {
    expect(await readFile(path.join(checkout, 'package.json'), 'utf8')).toBe(checkoutManifest);
    expect(await readdir(checkout)).not.toContain('package.json.before-pack');
  });

  it('ships a package.json with no development scripts, which npm does not list on install', async () => {
    const manifest = JSON.parse(
      await readFile(path.join(project, 'node_modules/yiem-agent/package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(manifest.scripts).toBeUndefined();
    expect(manifest.devDependencies).toBeUndefined();
    expect(manifest.bin).toEqual({ yiem: 'bin/yiem.mjs' });
    expect(JSON.stringify(manifest.exports)).not.toContain(SOURCE_CONDITION);
    expect(installOutput).not.toContain('yiem-agent@');
  });
});

describe('the installed package', () => {
  it('ships the build, the CLI and the README, and no tests, fixtures or benchmarks', async () => {
    const { stdout } = await inProject('find', ['node_modules/yiem-agent', '-type', 'f']);
    const files = stdout.trim().split('\n');
    expect(files).toContain('node_modules/yiem-agent/dist/src/index.js');
    expect(files).toContain('node_modules/yiem-agent/bin/yiem.mjs');
    expect(files).toContain('node_modules/yiem-agent/dist/console/index.html');
    expect(files.filter((file) => /\/dist\/console\/assets\/.*\.js$/.test(file))).not.toEqual([]);
    expect(files.filter((file) => file.includes('/src/console/'))).toEqual([]);
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

  // `npm install <tarball>` alone installs the peers too: all of one version, one copy each, or the
  // worker fails to load (`duplicate name 'ActivityHeartbeat' in Namespace coresdk`).
  it('installs one copy of each Temporal package, all of one version', async () => {
    const { stdout } = await inProject('find', ['node_modules', '-path', '*/@temporalio/*/package.json']);
    const installed = await Promise.all(
      stdout
        .trim()
        .split('\n')
        .filter((file) => /node_modules\/@temporalio\/[^/]+\/package\.json$/.test(file))
        .map(async (file) => {
          const { name, version } = JSON.parse(await readFile(path.join(project, file), 'utf8'));
          return { file, name: name as string, version: version as string };
        }),
    );
    const names = installed.map((entry) => entry.name);
    expect(new Set(names).size, JSON.stringify(installed)).toBe(names.length);
    expect(new Set(installed.map((entry) => entry.version))).toEqual(new Set(['1.23.0']));
    expect(names).toContain('@temporalio/workflow-streams');
  });

  it('imports every documented export of every entry with plain Node', async () => {
    const manifest = JSON.parse(
      await readFile(path.join(project, 'node_modules/yiem-agent/package.json'), 'utf8'),
    );
    const entries = Object.keys(manifest.exports as Record<string, unknown>)
      .filter((key) => key !== './package.json')
      .map((key) => `yiem-agent${key.slice(1)}`);
    const documented = documentedExports(await readFile(path.join(ROOT, 'docs/api.md'), 'utf8'));
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

  it("serves the console's built page from the installed package", async () => {
    const { stdout } = await inProject(process.execPath, [
      '--input-type=module',
      '-e',
      [
        "const { AgentClient, serveConsole } = await import('yiem-agent');",
        'const running = await serveConsole({ client: new AgentClient() });',
        'const page = await fetch(running.url);',
        'const script = /src="\\.\\/(assets\\/[^"]+\\.js)"/.exec(await page.text())?.[1];',
        'const asset = await fetch(new URL(script, running.url));',
        "console.log(page.status, asset.status, asset.headers.get('content-type'));",
        'await running.close();',
        'process.exit(0);',
      ].join('\n'),
    ]);
    expect(stdout.trim()).toBe('200 200 text/javascript; charset=utf-8');
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

  it("compiles and runs the README's agent.ts with the README's tsconfig.json and commands", async () => {
    const [agent] = codeBlocks(usage, 'ts');
    expect(agent?.startsWith('// agent.ts\n')).toBe(true);
    await writeFile(path.join(project, 'agent.ts'), agent ?? '');
    await writeFile(path.join(project, 'tsconfig.json'), codeBlocks(usage, 'json')[0] ?? '');
    const commands = codeBlocks(usage, 'sh')[1] ?? '';
    expect(commands.trim().split('\n')).toEqual(['npx tsc', 'node dist/agent.js']);
    const { stdout } = await inProject('bash', ['-e', '-c', commands], {
      ...NPM_FROM_CACHE,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
    });
    expect(stdout).toContain('completed: It is evening in Tokyo.');
    expect(usage.replace(/\s+/g, ' ')).toContain('It prints `completed: It is evening in Tokyo.`');
  });

  it("compiles and runs the README's writer.ts: a tool the agent writes answers from the sandbox", async () => {
    const writer = codeBlocks(usage, 'ts')[1];
    expect(writer?.startsWith('// writer.ts\n')).toBe(true);
    await writeFile(path.join(project, 'writer.ts'), writer ?? '');
    const commands = codeBlocks(usage, 'sh')[2] ?? '';
    expect(commands.trim().split('\n')).toEqual(['npx tsc', 'node dist/writer.js']);
    const { stdout } = await inProject('bash', ['-e', '-c', commands], {
      ...NPM_FROM_CACHE,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
    });
    expect(stdout).toContain('completed: addNumbers says 2 + 3 = 5');
    expect(usage.replace(/\s+/g, ' ')).toContain('It prints `completed: addNumbers says 2 + 3 = 5`.');
    expect(await readdir(path.join(project, 'written-tools'))).toEqual(['addNumbers.ts']);
  });

  // What Node 24 users of isolated-vm 5 met: an addon built for another Node. Here the installed
  // isolated-vm's addon for this Node is swapped for its build for the other supported Node.
  it('refuses to start a self-writing worker whose sandbox addon was built for another Node, saying why', async () => {
    const prebuilds = path.join(project, 'node_modules/isolated-vm/prebuilds/linux-x64');
    const own = path.join(prebuilds, `isolated-vm.abi${process.versions.modules}.glibc.node`);
    const other = path.join(
      prebuilds,
      `isolated-vm.abi${process.versions.modules === '137' ? 127 : 137}.glibc.node`,
    );
    const kept = await readFile(own);
    await copyFile(other, own);
    try {
      const script = [
        "import { createAgentWorker } from 'yiem-agent/worker';",
        'try {',
        "  await createAgentWorker({ connection: { taskQueue: 'broken-sandbox' }, tools: { selfWriting: { toolsDir: './written-tools' } } });",
        "  console.log('started');",
        '} catch (error) {',
        '  console.log(error.message);',
        '}',
      ].join('\n');
      const { stdout } = await inProject('node', ['--input-type=module', '-e', script], {
        TEMPORAL_ADDRESS: inject('temporalAddress'),
      });
      expect(stdout).not.toContain('started');
      expect(stdout).toContain(
        'Running written tools needs the package isolated-vm, whose native addon cannot load',
      );
      expect(stdout).toContain(
        `on Node ${process.versions.node} (ABI ${process.versions.modules}, linux-x64)`,
      );
      expect(stdout).toContain('npm install isolated-vm@6.2.0');
    } finally {
      await writeFile(own, kept);
    }
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
