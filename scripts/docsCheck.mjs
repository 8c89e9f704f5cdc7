#!/usr/bin/env node
// `npm run docs:check`: what README.md and docs/*.md say is checked against the repository.
//  1. links: every relative link names a file that exists, and every #anchor a heading of that file
//     (GitHub's heading ids); external links are checked for form only (no network here); the
//     index, docs/README.md, links every page of docs/;
//  2. code: every ```ts / ```tsx block is type-checked against the built package (`yiem-agent`
//     resolves to dist/'s types, as in a user's project), each block as a module of its own, with
//     the repository's compiler options; a block marked ```ts fragment
//     (a piece of a program, e.g. an object literal or calls on a `conversation` declared elsewhere)
//     is skipped, and the count of those is printed;
//  3. the CLI: every `yiem <command>` line of a CLI listing (a fenced block with no language whose
//     lines start with `yiem `) names a command of `yiem --help` (and, for a command with subcommands
//     such as `yiem schedule`, one of its own --help: `yiem schedule create`), with options that this
//     command's --help lists; every command and subcommand has a line in docs/cli.md's listing, and
//     each option of its --help is on that line (dist/ is built first when older than the sources).
//  4. the API reference: TypeDoc over the package's four entries (typedoc.json) finds no export
//     without a doc comment and no unresolved {@link}; `npm run docs:api` writes the reference
//     itself to .yiem/api/.
//  5. the configuration reference: docs/configuration.md names every variable and option the code
//     reads (test/unit/configurationReference.test.ts, through vitest.docs.config.ts: no server).
// Exits 1 listing every problem. `--only=links,code,cli,api,config` runs a subset.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const wanted = (check) => !only || only.includes(check);

const files = [
  'README.md',
  'BENCHMARKS.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const problems = [];
const problem = (file, line, text) => problems.push(`${file}:${line}: ${text}`);

/** Lines of a Markdown file with, for each, whether it is inside a fenced code block. */
function parse(file) {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks = [];
  let open = null;
  const prose = lines.map((line, index) => {
    const fence = /^(\s*)```(.*)$/.exec(line);
    if (fence && !open) {
      open = { info: fence[2].trim(), start: index + 1, lines: [] };
      return '';
    }
    if (fence && open) {
      blocks.push(open);
      open = null;
      return '';
    }
    if (open) {
      open.lines.push(line);
      return '';
    }
    return line;
  });
  return { lines, prose, blocks };
}

/** GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(file) {
  const ids = new Set();
  const seen = new Map();
  for (const line of parse(file).prose) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const text = heading[1]
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .trim()
      .toLowerCase();
    const base = text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

function checkLinks() {
  let checked = 0;
  for (const file of files) {
    const { prose } = parse(file);
    prose.forEach((line, index) => {
      const text = line.replace(/`[^`]*`/g, '');
      const targets = [
        ...[...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]),
        ...[...text.matchAll(/<(https?:\/\/[^>]+)>/g)].map((match) => match[1]),
      ];
      for (const target of targets) {
        checked++;
        if (/^[a-z]+:/i.test(target)) {
          if (!/^(https?|mailto):/.test(target))
            problem(file, index + 1, `unexpected link scheme: ${target}`);
          else if (target.startsWith('http'))
            try {
              new URL(target);
            } catch {
              problem(file, index + 1, `malformed URL: ${target}`);
            }
          continue;
        }
        const [pathPart, anchor] = target.split('#');
        const resolved = pathPart ? path.join(path.dirname(file), decodeURIComponent(pathPart)) : file;
        if (!existsSync(path.join(ROOT, resolved))) {
          problem(file, index + 1, `link to a missing file: ${target}`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor))
          problem(file, index + 1, `no heading #${anchor} in ${resolved}`);
      }
    });
  }
  // Every page is reachable from the index.
  const index = readFileSync(path.join(ROOT, 'docs/README.md'), 'utf8');
  for (const file of files)
    if (file.startsWith('docs/') && file !== 'docs/README.md' && !index.includes(`](${file.slice(5)}`))
      problem('docs/README.md', 1, `the index does not link ${file}`);
  return `${checked} links`;
}

function checkCode() {
  const dir = path.join(ROOT, '.yiem', 'docs-check');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const written = new Map();
  let fragments = 0;
  for (const file of files) {
    for (const block of parse(file).blocks) {
      const [language, ...flags] = block.info.split(/\s+/);
      if (language !== 'ts' && language !== 'tsx') continue;
      if (flags.includes('fragment')) {
        fragments++;
        continue;
      }
      const name = `${file.replace(/[/.]/g, '_')}_${block.start}.${language}`;
      writeFileSync(path.join(dir, name), `${block.lines.join('\n')}\n`);
      written.set(name, { file, start: block.start });
    }
  }
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.json',
      // No `yiem-source` condition: `yiem-agent` resolves to the built package's types (dist/), as a user's.
      compilerOptions: {
        moduleDetection: 'force',
        jsx: 'react-jsx',
        lib: ['ES2023', 'DOM'],
        noEmit: true,
        customConditions: [],
      },
      include: ['*.ts', '*.tsx'],
    }),
  );
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: 'pipe',
    });
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
    for (const line of output.split('\n')) {
      const match = /([^/\s]+\.tsx?)\((\d+),(\d+)\): (.*)$/.exec(line);
      const where = match && written.get(match[1]);
      if (where)
        problem(
          where.file,
          where.start + Number(match[2]),
          `\`\`\`${match[1].split('.').pop()} block: ${match[4]}`,
        );
      else if (line.trim()) problems.push(line);
    }
  }
  return `${written.size} code blocks compiled, ${fragments} marked fragment`;
}

async function help(args) {
  const { stdout } = await run(process.execPath, [path.join(ROOT, 'bin/yiem.mjs'), ...args, '--help'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return stdout;
}

/** `help` of each list of arguments, a few processes at a time: each is a second of Node's start-up. */
async function helps(argLists) {
  const texts = new Array(argLists.length);
  let next = 0;
  const worker = async () => {
    while (next < argLists.length) {
      const index = next++;
      texts[index] = await help(argLists[index]);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return texts;
}

/** The commands a --help text lists under `Commands:`, but `help`. */
function commandsIn(helpText) {
  const lines = helpText.split('\n');
  const start = lines.indexOf('Commands:');
  if (start < 0) return [];
  return lines
    .slice(start + 1)
    .map((line) => /^ {2}([a-z][\w-]*)/.exec(line)?.[1])
    .filter((name) => name && name !== 'help');
}

/**
 * Every command the CLI has, each with its --help: `yiem --help`'s commands, and for those that have
 * subcommands of their own (`yiem schedule create`), each subcommand in their place.
 */
async function cliCommands() {
  const names = commandsIn(await help([]));
  const owns = await helps(names.map((name) => [name]));
  const found = names.flatMap((name, index) => {
    const subcommands = commandsIn(owns[index]);
    return subcommands.length === 0 ? [[name, owns[index]]] : subcommands.map((sub) => [`${name} ${sub}`]);
  });
  const pending = found.filter((entry) => entry.length === 1);
  const subHelps = await helps(pending.map(([key]) => key.split(' ')));
  for (const [index, entry] of pending.entries()) entry.push(subHelps[index]);
  return new Map(found);
}

/** Which command of the CLI a `yiem …` line names (`schedule create`), or an error saying why none. */
function commandOf(commands, line) {
  const match = /^yiem\s+([a-z][\w-]*)(?:\s+([a-z][\w-]*))?(.*)$/.exec(line);
  if (!match) return null;
  const [, first, second = '', tail] = match;
  if (commands.has(first)) return { command: first, rest: line.slice(`yiem ${first}`.length) };
  const group = [...commands.keys()].filter((name) => name.startsWith(`${first} `));
  if (group.length === 0) return { error: `\`yiem ${first}\`: yiem --help has no such command` };
  if (!commands.has(`${first} ${second}`))
    return { error: `\`yiem ${first} ${second}\`: \`yiem ${first} --help\` has no such subcommand` };
  return { command: `${first} ${second}`, rest: tail };
}

/** The options of a listing line's usage: up to three spaces or a `#`, where its comment starts. */
function usageOptions(rest) {
  const usage = (rest.split(/ {3,}|\s#/)[0] ?? '').replace(/\$\([^)]*\)|"[^"]*"/g, '');
  return [...usage.matchAll(/--([a-z][\w-]*)/g)].map((option) => option[1]);
}

/** Whether a command's --help lists an option (`sandbox-*` for the family of `--sandbox-…`). */
function knows(helpText, name) {
  if (name === 'version') return true;
  if (name.endsWith('-*')) return helpText.includes(`--${name.slice(0, -1)}`);
  return new RegExp(`--${name}\\b`).test(helpText);
}

/** Each `yiem …` line of every CLI listing (a fenced block with no language) with the command it names. */
function cliLines(commands) {
  const found = [];
  for (const file of files)
    for (const block of parse(file).blocks) {
      if (block.info !== '' || !block.lines.some((line) => line.startsWith('yiem '))) continue;
      block.lines.forEach((line, index) => {
        const named = commandOf(commands, line);
        if (!named || line.startsWith('yiem help')) return;
        // A usage too long for one line goes on under it, indented, starting with `[`.
        const continued = [];
        for (const next of block.lines.slice(index + 1)) {
          if (!/^\s+\[/.test(next)) break;
          continued.push(next);
        }
        found.push({ file, at: block.start + index + 1, line, continued, ...named });
      });
    }
  return found;
}

/** The options that every command takes, which docs/cli.md says once rather than on each line. */
const COMMON_OPTIONS = ['help', 'address', 'namespace', 'task-queue', 'profile'];

async function checkCli() {
  const commands = await cliCommands();
  const lines = cliLines(commands);
  /** docs/cli.md's listing: each command's lines. */
  const listing = new Map();
  for (const { file, at, line, continued, command, rest, error } of lines) {
    if (error) {
      problem(file, at, error);
      continue;
    }
    if (file === 'docs/cli.md')
      listing.set(command, [listing.get(command) ?? '', line, ...continued].join(' '));
    for (const name of usageOptions([rest, ...continued].join(' ')))
      if (!knows(commands.get(command), name))
        problem(file, at, `\`yiem ${command} --${name}\`: not in \`yiem ${command} --help\``);
  }
  for (const [command, helpText] of commands) {
    if (!listing.has(command)) {
      const parent = command.includes(' ') ? `yiem ${command.split(' ')[0]} --help` : 'yiem --help';
      problem('docs/cli.md', 1, `\`yiem ${command}\` (in ${parent}) is not in the CLI listing`);
      continue;
    }
    const line = listing.get(command);
    for (const option of helpText.matchAll(/^ {2}(?:-\w, )?--([a-z][\w-]*)/gm)) {
      const name = option[1];
      if (COMMON_OPTIONS.includes(name)) continue;
      const sandbox = name.startsWith('sandbox-') && line.includes('--sandbox-*');
      if (!sandbox && !new RegExp(`--${name}\\b`).test(line))
        problem(
          'docs/cli.md',
          1,
          `\`yiem ${command} --${name}\` (in its --help) is not on its line of the listing`,
        );
    }
  }
  return `${lines.length} CLI lines against the --help of ${commands.size} commands and subcommands`;
}

/** Terminal colour codes, which TypeDoc writes even into a pipe. */
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** TypeDoc (typedoc.json) over the package's entries: every export has a doc comment, every {@link} resolves. */
function checkApi() {
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typedoc/bin/typedoc'), '--emit', 'none'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: 'pipe',
    });
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.replace(ANSI_COLOUR, '');
    for (const line of output.split('\n'))
      if (/\[(warning|error)\]/.test(line)) problems.push(`typedoc: ${line}`);
    if (!/\[(warning|error)\]/.test(output)) problems.push(`typedoc failed: ${output}`);
  }
  return 'API doc comments (typedoc)';
}

/** docs/configuration.md against the code (test/unit/configurationReference.test.ts, without a server). */
function checkConfiguration() {
  try {
    execFileSync(
      process.execPath,
      [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'vitest.docs.config.ts'],
      { cwd: ROOT, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, NO_COLOR: '1' } },
    );
  } catch (error) {
    problems.push(
      `docs/configuration.md: test/unit/configurationReference.test.ts failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
  }
  return 'the configuration reference';
}

const report = [];
// The code blocks compile against dist/'s types and the CLI runs from dist/: brought up to date first
// when a source is newer (as `prepare` does).
if (wanted('code') || wanted('cli'))
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs'), '--if-stale'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
if (wanted('links')) report.push(checkLinks());
if (wanted('code')) report.push(checkCode());
if (wanted('cli')) report.push(await checkCli());
if (wanted('api')) report.push(checkApi());
if (wanted('config')) report.push(checkConfiguration());
for (const line of problems) console.error(line);
console.log(`docs:check: ${report.join(', ')}; ${problems.length} problem(s)`);
process.exit(problems.length > 0 ? 1 : 0);
