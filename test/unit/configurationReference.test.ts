import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REFERENCE = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
/** The product's code: what runs for a user (the console's page reads no environment). */
const PRODUCT = ['src', 'activities', 'workflows', 'tools', 'bin'];
const PREFIXES = '(?:YIEM|OPENAI|TEMPORAL)_[A-Z0-9_]+';
/** `env.NAME`, `env?.NAME`, `env['NAME']`, and names handed to a reader as strings (`fromEnv('NAME')`). */
const READS = new RegExp(
  `\\benv\\??\\.(${PREFIXES})|\\benv\\[['"](${PREFIXES})['"]\\]|['"](${PREFIXES})['"]`,
  'g',
);
/** Written in the code's comments and messages as `NAME`, the way the reference names them. */
const MENTIONS = new RegExp(`\`(${PREFIXES})\\*?\``, 'g');

function productFiles(): string[] {
  return PRODUCT.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.(ts|mts|mjs|cjs)$/.test(file) && !file.startsWith(`console${path.sep}`))
      .map((file) => path.join(ROOT, dir, file)),
  );
}

function namesIn(text: string, pattern: RegExp): Set<string> {
  return new Set([...text.matchAll(pattern)].map((match) => match.slice(1).find(Boolean) ?? ''));
}

const code = productFiles()
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n');
const documented = namesIn(REFERENCE, MENTIONS);

it('names every environment variable the code reads', () => {
  const read = [...namesIn(code, READS)].filter((name) => !/^TEMPORAL_GRPC_META_$/.test(name));
  expect(read.length).toBeGreaterThan(25);
  expect(read.filter((name) => !documented.has(name))).toEqual([]);
});

it('names no YIEM_ variable the code does not read', () => {
  const stale = [...documented].filter((name) => name.startsWith('YIEM_') && !code.includes(name));
  expect(stale).toEqual([]);
});

/** The options an interface of `source` declares (its own, not those of the interfaces it extends). */
function optionsOf(source: string, name: string): string[] {
  const body = new RegExp(`export interface ${name}(?: extends [^{]+)? \\{\\n([\\s\\S]*?)\\n\\}`).exec(
    source,
  );
  if (!body) throw new Error(`no interface ${name}`);
  return [...(body[1] ?? '').matchAll(/^ {2}(\w+)\??:/gm)].map((match) => match[1] ?? '');
}

it('names every option of createAgentWorker, its groups, and AgentClient', () => {
  const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
  const workerOptions = read('src/worker/options.ts');
  const groups = ['WorkerConnectionOptions', 'ToolOptions', 'HookOptions', 'CompactionOptions'];
  const options = [
    ...optionsOf(read('src/infrastructure/connection.ts'), 'TemporalConnectionSettings'),
    ...optionsOf(workerOptions, 'GroupedWorkerOptions'),
    ...[...groups, 'TemporalWorkerOptions'].flatMap((group) => optionsOf(workerOptions, group)),
    ...optionsOf(read('src/contract/types/models.ts'), 'ModelOptions'),
    ...optionsOf(read('src/client/client.ts'), 'AgentClientOptions'),
  ];
  expect(options.length).toBeGreaterThan(30);
  const section = REFERENCE.slice(REFERENCE.indexOf('\n## Options in code\n'));
  // `name` in a table of its own, `group.name` in the worker's.
  const named = (option: string) => section.includes(`\`${option}\``) || section.includes(`.${option}\``);
  expect(options.filter((option) => !named(option))).toEqual([]);
});

it('names the old flat name of every deprecated worker option', () => {
  const flat = optionsOf(readFileSync(path.join(ROOT, 'src/worker/options.ts'), 'utf8'), 'FlatWorkerOptions');
  expect(flat.length).toBeGreaterThan(20);
  const places = readFileSync(path.join(ROOT, 'src/worker/options.ts'), 'utf8');
  expect(flat.filter((name) => !new RegExp(`^  ${name}: \\['`, 'm').test(places))).toEqual([]);
});
