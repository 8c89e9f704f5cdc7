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

/** The options an interface of `file` declares (its own and those of the interfaces it extends there). */
function optionsOf(source: string, name: string): string[] {
  const body = new RegExp(`export interface ${name}(?: extends (\\w+))? \\{\\n([\\s\\S]*?)\\n\\}`).exec(
    source,
  );
  if (!body) throw new Error(`no interface ${name}`);
  return [...(body[2] ?? '').matchAll(/^ {2}(\w+)\??:/gm)].map((match) => match[1] ?? '');
}

it('names every option of createAgentWorker and AgentClient', () => {
  const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
  const options = [
    ...optionsOf(read('src/infrastructure/connection.ts'), 'TemporalConnectionSettings'),
    ...optionsOf(read('src/worker/worker.ts'), 'AgentWorkerOptions'),
    ...optionsOf(read('src/client/client.ts'), 'AgentClientOptions'),
  ];
  expect(options.length).toBeGreaterThan(30);
  const section = REFERENCE.slice(REFERENCE.indexOf('\n## Options in code\n'));
  expect(options.filter((option) => !section.includes(`\`${option}\``))).toEqual([]);
});
