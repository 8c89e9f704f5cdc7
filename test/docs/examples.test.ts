import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { forThisRun, NOT_RUN, SCRIPTED, SELF_SCRIPTED } from '../support/docsExamples.ts';
import { SOURCE_CONDITION_FLAG } from '../support/sourceCondition.ts';

/**
 * The examples of README.md and docs/ that a reader would run, run, against the test server, from
 * the sources:
 * - every ```ts block of docs/ that names its file on its first line (`// guardrails.ts: …`) and
 *   brings its own model (`yiem-agent/testing`'s scripted one), as it is;
 * - every block that uses a real model, with the scripted one: test/support/docsExamples.ts holds
 *   each one's scripted replies, and the worker and conversation it expects to exist; the server's
 *   address and the model URLs the block names are this run's, and the process ends after the
 *   block's last line (a block's worker would keep it alive);
 * - and no other: a block that is in neither needs a reason in test/support/docsExamples.ts's `NOT_RUN` (the
 *   README's agent.ts and writer.ts, say, which test/package runs against the packed package).
 * Where the text says what a block prints, the output must say it: each `It prints `…`` after the
 * block (a `…` inside stands for text left out), and each comment on (or right under) a
 * `console.log` line of a self-scripted block; of a block run with the scripted model, each such
 * comment that quotes an output whole (`// "The turn's budget of 0.05 cost is reached …"`).
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

/** A ```ts or ```tsx block of README.md or docs/ (not one marked `fragment`: a piece of a program, never run). */
interface Block {
  page: string;
  line: number;
  code: string;
  /** The text after it, up to the next block or heading. */
  after: string;
}

async function blocks(): Promise<Block[]> {
  const pages = [
    'README.md',
    ...(await readdir(path.join(ROOT, 'docs')))
      .filter((file) => file.endsWith('.md'))
      .map((file) => `docs/${file}`),
  ];
  const found: Block[] = [];
  for (const page of pages) {
    const text = await readFile(path.join(ROOT, page), 'utf8');
    for (const match of text.matchAll(/^```tsx?\n([\s\S]*?)^```\n/gm)) {
      const [block, code = ''] = match;
      found.push({
        page,
        line: text.slice(0, match.index).split('\n').length,
        code,
        after: text.slice((match.index ?? 0) + block.length).split(/^```ts|^#/m)[0] ?? '',
      });
    }
  }
  return found;
}

/** A stated output as the pieces it must print in order (`…` stands for text left out). */
const pieces = (expected: string): string[] =>
  expected
    .split('…')
    .map((piece) => piece.trim().replace(/^[;,]\s*|[;,]$/g, ''))
    .filter((piece) => piece !== '');

/** The sentence "It prints `…`" of the text after a block: its quoted pieces. */
function statedAfter(after: string): string[] {
  const paragraph = after.split(/\n\s*\n/).find((p) => p.trim().startsWith('It prints')) ?? '';
  const prose = paragraph.replace(/\s+/g, ' ').split(/(?<=[.)])\s+(?=[A-Z])/)[0] ?? '';
  return [...prose.matchAll(/`([^`]+)`/g)].map((piece) => piece[1] ?? '');
}

/** The comments on (or right under) the block's `console.log` lines. */
function loggedComments(code: string): string[] {
  const lines = code.split('\n');
  return lines.flatMap((line, index) => {
    if (!/console\.log\(/.test(line)) return [];
    const trailing = /\);\s*\/\/\s*(.+)$/.exec(line)?.[1];
    const below = /^\s*\/\/\s*(.+)$/.exec(lines[index + 1] ?? '')?.[1];
    return [trailing ?? below].filter((comment): comment is string => comment !== undefined);
  });
}

/** The runnable examples that bring their own scripted model and name their file (`// guardrails.ts: …`). */
function selfScripted(all: Block[]): Example[] {
  return all.flatMap((block) => {
    const name = /^\/\/ (\w+)\.ts\b/.exec(block.code)?.[1];
    if (!name || !block.page.startsWith('docs/') || !block.code.includes(SELF_SCRIPTED)) return [];
    const expected = [...statedAfter(block.after), ...loggedComments(block.code)].map(pieces);
    return [{ page: block.page, line: block.line, name, code: block.code, expected }];
  });
}

/**
 * What a block run with the scripted model must print: the text's "It prints", and the comments of
 * its `console.log` lines that quote an output whole (`// "The turn's budget …"`); other comments
 * describe rather than quote.
 */
function scriptedExpectations(block: Block): string[][] {
  const quoted = loggedComments(block.code).flatMap((comment) => {
    const whole = /^"([^"]*)"$|^'([^']*)'$/.exec(comment.trim());
    return whole ? [whole[1] ?? whole[2] ?? ''] : [];
  });
  return [...statedAfter(block.after), ...quoted].map(pieces);
}

const all = await blocks();
const matches = (entry: { page: string; line: string }, block: Block) =>
  entry.page === block.page && block.code.includes(entry.line);

async function examples(): Promise<Example[]> {
  return selfScripted(all);
}

const found = await examples();
const scratch = path.join(ROOT, '.yiem', 'docs-examples');
await mkdir(scratch, { recursive: true });
const dir = await mkdtemp(path.join(scratch, 'run-'));
/** The model of the blocks that start their own worker (through `OPENAI_BASE_URL`). */
const model = await startScriptedModel();

afterAll(async () => {
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `code` as `<name>.ts` in a folder of its own inside the checkout, where `yiem-agent` is the package itself. */
async function runBlock(name: string, code: string, env: Record<string, string> = {}): Promise<string> {
  const folder = await mkdtemp(path.join(dir, `${name}-`));
  // What a block's worker loads from the reader's project: an empty tools folder is enough here.
  await mkdir(path.join(folder, 'tools'));
  const file = path.join(folder, `${name}.ts`);
  await writeFile(file, code);
  const { stdout } = await run(process.execPath, [SOURCE_CONDITION_FLAG, '--import', 'tsx', file], {
    cwd: folder,
    env: { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), ...env },
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

function expectPrinted(where: string, stdout: string, expected: string[][]): void {
  for (const pieces of expected) {
    let from = 0;
    for (const piece of pieces) {
      const at = stdout.indexOf(piece, from);
      expect(at, `${where} says it prints "${piece}"; it printed:\n${stdout}`).toBeGreaterThanOrEqual(0);
      from = at + piece.length;
    }
  }
}

describe('the examples of docs/', () => {
  it('finds the runnable ones', () => {
    expect(found.map(({ page, name }) => `${page} ${name}.ts`)).toEqual(
      expect.arrayContaining(['docs/guardrails.md guardrails.ts', 'docs/compaction.md compaction.ts']),
    );
  });

  it('runs every block a reader would run, or says why not', () => {
    const unaccounted = all
      .filter((block) => !found.some((example) => example.page === block.page && example.line === block.line))
      .filter((block) => ![...SCRIPTED, ...NOT_RUN].some((entry) => matches(entry, block)))
      .map((block) => `${block.page}:${block.line}`);
    expect(unaccounted, 'blocks with neither a script in test/support/docsExamples.ts nor a reason').toEqual(
      [],
    );
    const stale = [...SCRIPTED, ...NOT_RUN]
      .filter((entry) => all.filter((block) => matches(entry, block)).length !== 1)
      .map((entry) => `${entry.page}: ${entry.line}`);
    expect(stale, 'entries of test/support/docsExamples.ts that match no block, or several').toEqual([]);
  });

  it.each(found.map((example) => [`${example.page}:${example.line} ${example.name}.ts`, example] as const))(
    '%s runs and prints what the text says',
    async (_title, example) => {
      const stdout = await runBlock(example.name, example.code);
      console.log(
        `${example.page}:${example.line} ${example.name}.ts: ${example.expected.length} stated output(s) checked`,
      );
      expectPrinted(`${example.page}:${example.line}`, stdout, example.expected);
    },
    150_000,
  );
});

describe('the examples of docs/ that use a real model, with the scripted one', () => {
  const cases = SCRIPTED.map((spec) => {
    const block = all.find((candidate) => matches(spec, candidate));
    return [`${spec.page}:${block?.line ?? '?'}`, spec, block] as const;
  });

  it.each(cases)(
    '%s runs and prints what the text says',
    async (title, spec, block) => {
      expect(block, `${title}: no block has the line "${spec.line}"`).toBeDefined();
      if (!block) return;
      const agent = spec.worker
        ? await startTestAgent({
            worker: { connection: { taskQueue: spec.worker.taskQueue ?? `docs-${randomUUID()}` } },
          })
        : undefined;
      const answering = agent?.model ?? model;
      answering.reset();
      try {
        if (agent && spec.conversation) await prepareConversation(agent, spec.conversation);
        answering.reset();
        answering.enqueue(...spec.replies);
        const address = inject('temporalAddress');
        // A block's worker keeps its process alive: the process ends once the block's last line ran.
        const code = `${forThisRun(block.code, address, model.baseURL)}\nprocess.exit(0);\n`;
        const stdout = await runBlock(`example-${block.line}`, code, {
          OPENAI_BASE_URL: model.baseURL,
          OPENAI_API_KEY: 'scripted',
          ...(agent ? { YIEM_TASK_QUEUE: agent.taskQueue } : {}),
        });
        const expected = scriptedExpectations(block);
        console.log(
          `${title}: ${spec.replies.length} scripted repl(ies), ${expected.length} stated output(s) checked`,
        );
        expectPrinted(title, stdout, expected);
        expect(
          spec.modelCalls ?? [spec.replies.length],
          `${title}: the model calls the script answers`,
        ).toContain(answering.requestCount);
      } finally {
        for (const id of spec.schedules ?? []) await agent?.client.schedules.delete(id);
        await agent?.close();
      }
    },
    150_000,
  );
});

/** A conversation the block opens by id: started afresh (ending one of an earlier run) with `turns` turns. */
async function prepareConversation(agent: TestAgent, wanted: { id: string; turns: number }): Promise<void> {
  await agent.client.client.workflow
    .getHandle(wanted.id)
    .terminate('docs example: started afresh')
    .catch(() => undefined);
  const conversation = await agent.client.startConversation({ id: wanted.id, systemPrompt: 'Be brief.' });
  for (let turn = 1; turn <= wanted.turns; turn++) {
    agent.model.enqueue({ kind: 'text', text: `Answer ${turn}.` });
    await conversation.send(`Question ${turn}.`);
  }
}
