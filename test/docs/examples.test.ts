import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SOURCE_CONDITION_FLAG } from '../support/sourceCondition.ts';

/**
 * The examples of docs/ that a reader would run, run: every ```ts block that names
 * its file on its first line (`// guardrails.ts: …`) and brings its own model (`yiem-agent/testing`'s
 * scripted one), against the test server, from the sources. Where the text says what it prints, the
 * output must say it: each `It prints `…`` after the block (a `…` inside stands for text left out),
 * and each comment on (or right under) a `console.log` line of the block.
 * The README's examples (agent.ts, writer.ts) are left to test/package, which runs them against
 * the packed package, as a user installs it, and checks what they print the same way.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

interface Example {
  page: string;
  line: number;
  name: string;
  code: string;
  /** Texts the output must contain, each a list of pieces that must come in this order. */
  expected: string[][];
}

async function examples(): Promise<Example[]> {
  const pages = (await readdir(path.join(ROOT, 'docs')))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`);
  const found: Example[] = [];
  for (const page of pages) {
    const text = await readFile(path.join(ROOT, page), 'utf8');
    for (const match of text.matchAll(/^```ts\n(\/\/ (\w+)\.ts\b[^\n]*\n[\s\S]*?)^```\n/gm)) {
      const [block, code = '', name = ''] = match;
      if (!code.includes("from 'yiem-agent/testing'")) continue;
      // The sentence "It prints `…`" of the text that follows, before the next example or heading.
      const after = text.slice((match.index ?? 0) + block.length).split(/^```ts|^#/m)[0] ?? '';
      const paragraph = after.split(/\n\s*\n/).find((p) => p.trim().startsWith('It prints')) ?? '';
      const prose = paragraph.replace(/\s+/g, ' ').split(/(?<=[.)])\s+(?=[A-Z])/)[0] ?? '';
      const stated = [...prose.matchAll(/`([^`]+)`/g)].map((piece) => piece[1] ?? '');
      const lines = code.split('\n');
      const logged = lines.flatMap((line, index) => {
        if (!/console\.log\(/.test(line)) return [];
        const trailing = /\);\s*\/\/\s*(.+)$/.exec(line)?.[1];
        const below = /^\s*\/\/\s*(.+)$/.exec(lines[index + 1] ?? '')?.[1];
        return [trailing ?? below].filter((comment): comment is string => comment !== undefined);
      });
      found.push({
        page,
        line: text.slice(0, match.index).split('\n').length,
        name,
        code,
        expected: [...stated, ...logged].map((expected) =>
          expected
            .split('…')
            .map((piece) => piece.trim().replace(/^[;,]\s*|[;,]$/g, ''))
            .filter((piece) => piece !== ''),
        ),
      });
    }
  }
  return found;
}

const found = await examples();
const scratch = path.join(ROOT, '.yiem', 'docs-examples');
await mkdir(scratch, { recursive: true });
const dir = await mkdtemp(path.join(scratch, 'run-'));

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the examples of docs/', () => {
  it('finds the runnable ones', () => {
    expect(found.map(({ page, name }) => `${page} ${name}.ts`)).toEqual(
      expect.arrayContaining(['docs/guardrails.md guardrails.ts', 'docs/compaction.md compaction.ts']),
    );
  });

  it.each(found.map((example) => [`${example.page}:${example.line} ${example.name}.ts`, example] as const))(
    '%s runs and prints what the text says',
    async (_title, example) => {
      // Each in a folder of its own inside the checkout, where `yiem-agent` resolves to the package itself.
      const folder = await mkdtemp(path.join(dir, `${example.name}-`));
      const file = path.join(folder, `${example.name}.ts`);
      await writeFile(file, example.code);
      const { stdout } = await run(process.execPath, [SOURCE_CONDITION_FLAG, '--import', 'tsx', file], {
        cwd: folder,
        env: { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress') },
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      console.log(
        `${example.page}:${example.line} ${example.name}.ts: ${example.expected.length} stated output(s) checked`,
      );
      for (const pieces of example.expected) {
        let from = 0;
        for (const piece of pieces) {
          const at = stdout.indexOf(piece, from);
          expect(
            at,
            `${example.page}:${example.line} says it prints "${piece}"; it printed:\n${stdout}`,
          ).toBeGreaterThanOrEqual(0);
          from = at + piece.length;
        }
      }
    },
    150_000,
  );
});
