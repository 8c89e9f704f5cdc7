import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import { checkYiemCommandLine, ROOT } from './support.ts';

const dockerfile = DockerfileParser.parse(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
const packageJson = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const instructions = dockerfile.getInstructions();
const lastStageStart = instructions.lastIndexOf(dockerfile.getFROMs().at(-1) as Instruction);
const runtime = instructions.slice(lastStageStart);
const args = (instruction: Instruction) => instruction.getArguments().map((arg) => arg.getValue());
const execForm = (keyword: string): string[] => {
  const instruction = runtime.filter((entry) => entry.getKeyword() === keyword).at(-1);
  if (!instruction) throw new Error(`no ${keyword} in the runtime stage`);
  return JSON.parse(instruction.getArgumentsContent() ?? '');
};

describe('Dockerfile', () => {
  it('is multi-stage on the newest Node major the package supports', () => {
    const froms = dockerfile.getFROMs();
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const majors = [...String(packageJson.engines.node).matchAll(/(?:\^|>=)(\d+)/g)].map(([, major]) =>
      Number(major),
    );
    expect(majors).toContain(24);
    for (const from of froms) {
      expect(from.getImageName()).toBe('node');
      expect(Number(from.getImageTag()?.split(/[.-]/)[0])).toBe(Math.max(...majors));
    }
  });

  it('runs as a non-root user', () => {
    const user = runtime.filter((entry) => entry.getKeyword() === 'USER').at(-1);
    expect(user && args(user)[0]).toBeTruthy();
    expect(['root', '0']).not.toContain(user && args(user)[0]?.split(':')[0]);
  });

  it('installs from the lockfile with npm ci, and every npm script it runs exists', () => {
    const runs = instructions.filter((entry) => entry.getKeyword() === 'RUN').map(args);
    expect(runs.some((run) => run[0] === 'npm' && run[1] === 'ci')).toBe(true);
    const copied = instructions.filter((entry) => entry.getKeyword() === 'COPY').flatMap(args);
    expect(copied).toContain('package-lock.json');
    for (const run of runs.filter((run) => run[0] === 'npm' && run[1] === 'run')) {
      expect(Object.keys(packageJson.scripts)).toContain(run[2]);
    }
  });

  it('builds from the sources, and the runtime stage copies the build, and only paths that exist', () => {
    const copiedInto = (stage: Instruction[]) =>
      stage
        .filter((entry) => entry.getKeyword() === 'COPY' && !/--from/.test(entry.getTextContent()))
        .flatMap((entry) => args(entry).slice(0, -1));
    const built = copiedInto(instructions.slice(0, lastStageStart));
    const shipped = copiedInto(runtime);
    for (const source of [...built, ...shipped])
      expect(existsSync(path.join(ROOT, source)), source).toBe(true);
    // What scripts/build.mjs compiles (tsconfig.build.json's include) and what it needs to do so.
    for (const input of ['src', 'activities', 'workflows', 'tools', 'scripts', 'tsconfig.build.json']) {
      expect(built).toContain(input);
    }
    expect(shipped).toEqual(expect.arrayContaining(['bin', 'package.json']));
    const fromBuild = runtime.filter((entry) => /--from=build/.test(entry.getTextContent())).map(args);
    expect(fromBuild.map((copy) => copy.at(-2))).toEqual(
      expect.arrayContaining(['/app/dist', '/app/node_modules']),
    );
  });

  it('imports at run time only what the package declares: its dependencies and peer dependencies', () => {
    const files = ['bin', 'src', 'activities', 'workflows', 'tools'].flatMap((dir) =>
      readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => /\.(ts|mjs)$/.test(file))
        .map((file) => path.join(ROOT, dir, file))
        // The console's page runs in the browser: Vite bundles React into dist/console at build time.
        .filter((file) => !file.startsWith(path.join(ROOT, 'src', 'console') + path.sep)),
    );
    const imported = new Set(
      files.flatMap((file) =>
        [
          ...readFileSync(file, 'utf8').matchAll(
            /^(?:import|export)[^'"]*from '([^'.][^']*)'|import\('([^'.][^']*)'\)/gm,
          ),
        ]
          .map((match) => match[1] ?? match[2] ?? '')
          .filter((specifier) => !specifier.startsWith('node:')),
      ),
    );
    const packageOf = (specifier: string) =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/');
    const declared = { ...packageJson.dependencies, ...packageJson.peerDependencies };
    // Built-in tools import the package itself by name, as a user's tool does.
    const missing = [...imported]
      .map(packageOf)
      .filter((name) => name !== packageJson.name && !(name in declared));
    expect(missing).toEqual([]);
    expect(imported.size).toBeGreaterThan(5);
  });

  it("starts the package's own yiem binary with a real command", async () => {
    const entrypoint = execForm('ENTRYPOINT');
    expect(entrypoint).toEqual(['node', packageJson.bin.yiem]);
    await checkYiemCommandLine(execForm('CMD'));
  });

  it('keeps node_modules and local state out of the build context', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.yiem', '.env']));
  });
});
