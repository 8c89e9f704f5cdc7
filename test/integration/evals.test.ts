import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalReport } from '../../src/client/evals/report.ts';
import { runEval } from '../../src/client/evals/runEval.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';
import { type ReplyHandler, type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { runYiem } from '../support/cli.ts';

/** Debian's chromium; never a downloaded browser. */
const CHROMIUM = '/usr/bin/chromium';

/** Orders 1 to 20: each kept conversation asks where one is. */
const ORDERS = Array.from({ length: 20 }, (_, index) => String(index + 1));
/** The new agent asks for this order with an argument the old one never used: a divergence. */
const DIVERGING_ORDER = '7';
/** The new agent refuses to answer about this order: the regression. */
const REGRESSING_ORDER = '13';

/** The shipping lookup: counts each time it really runs, which recorded mode must never do. */
function lookupTool(executions: string[]): ActivityTool {
  return {
    name: 'lookupOrder',
    label: 'lookupOrder',
    description: 'Where an order is',
    parallelToolExecute: true,
    inputSchema: {
      type: 'object',
      properties: { orderId: { type: 'string' }, verbose: { type: 'boolean' } },
    },
    execute: async (_toolCallId, args) => {
      executions.push(String(args.orderId));
      return textResult(`order ${String(args.orderId)} left the warehouse`);
    },
  };
}

type Message = { role: string; content: string | null };
const orderOf = (messages: readonly Message[]): string =>
  /order (\d+)/.exec(messages.find((message) => message.role === 'user')?.content ?? '')?.[1] ?? '?';

/** The old agent: looks the order up, then says where it is. The new one differs on two orders. */
function agentModel(version: 'old' | 'new'): ReplyHandler {
  return (request) => {
    const messages = request.body.messages as Message[];
    const order = orderOf(messages);
    const last = messages.at(-1);
    if (last?.role === 'tool') return { kind: 'text', text: `Order ${order}: ${last.content}.` };
    if (version === 'new' && order === REGRESSING_ORDER)
      return { kind: 'text', text: 'I cannot help with that.' };
    const args =
      version === 'new' && order === DIVERGING_ORDER ? { orderId: order, verbose: true } : { orderId: order };
    return { kind: 'toolCalls', toolCalls: [{ name: 'lookupOrder', arguments: args }] };
  };
}

/** The judge passes a conversation whose agent said where the order is. */
const judgeModel: ReplyHandler = (request) => {
  const asked = (request.body.messages as Message[]).map((message) => message.content).join('\n');
  const pass = /agent: Order \d+/.test(asked);
  return {
    kind: 'text',
    text: JSON.stringify({ pass, reason: pass ? 'says where the order is' : 'no answer' }),
  };
};

describe('evals from kept conversations', () => {
  const oldRuns: string[] = [];
  const newRuns: string[] = [];
  let oldAgent: TestAgent;
  let newAgent: TestAgent;
  let judge: ScriptedModel;
  const kept: string[] = [];
  let dir: string;
  let baseline: EvalReport | undefined;

  beforeAll(async () => {
    [oldAgent, newAgent, judge] = await Promise.all([
      startTestAgent({ tools: [lookupTool(oldRuns)] }),
      startTestAgent({ tools: [lookupTool(newRuns)] }),
      startScriptedModel(),
    ]);
    dir = await mkdtemp(path.join(tmpdir(), 'yiem-evals-'));
    oldAgent.model.respond(agentModel('old'));
    newAgent.model.respond(agentModel('new'));
    judge.respond(judgeModel);
    for (const order of ORDERS) {
      const conversation = await oldAgent.client.startConversation({ systemPrompt: 'You track orders.' });
      await conversation.send(`where is order ${order}?`);
      await conversation.end();
      kept.push(conversation.id);
    }
    oldRuns.length = 0;
  }, 120_000);
  afterAll(async () => {
    await Promise.all([oldAgent?.close(), newAgent?.close(), judge?.close()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('replays 20 kept conversations on the new agent without running a tool, scores them and flags the regression against a baseline', async () => {
    const scoring = {
      conversations: kept,
      concurrency: 4,
      expectations: {
        all: { replyMatches: '^Order \\d+', toolCalled: [{ tool: 'lookupOrder' }], maxTurns: 1 },
      },
      judge: { baseURL: judge.baseURL, model: 'judge', rubric: 'The agent says where the order is.' },
    };
    const oldRun = await runEval(oldAgent.client, {
      ...scoring,
      candidate: { taskQueue: oldAgent.taskQueue },
    });
    expect(oldRun.summary).toMatchObject({ cases: 20, passed: 20, passRate: 1, diverged: 0 });
    // The next test gives it to yiem eval as its baseline.
    baseline = oldRun;

    const report: EvalReport = await runEval(newAgent.client, {
      ...scoring,
      candidate: { taskQueue: newAgent.taskQueue },
      baseline: oldRun,
    });
    // Recorded mode: neither agent's tool ran during the evals.
    expect(oldRuns).toEqual([]);
    expect(newRuns).toEqual([]);
    expect(report.summary).toMatchObject({ cases: 20, passed: 19, regressions: 1, diverged: 1 });
    const [first] = report.cases;
    expect(first?.caseId).toBe(kept[Number(REGRESSING_ORDER) - 1]);
    expect(first).toMatchObject({ passed: false, regression: true });
    expect(first?.failures).toEqual([
      'the reply does not match /^Order \\d+/',
      'lookupOrder was not called',
      'the judge failed it: no answer',
    ]);
    expect(first?.turns[0]).toMatchObject({
      old: { reply: `Order ${REGRESSING_ORDER}: order ${REGRESSING_ORDER} left the warehouse.` },
      new: { reply: 'I cannot help with that.', toolCalls: [], status: 'completed' },
    });
    // The diverging call was answered as diverged, not run; the kept calls got their recorded results.
    const diverging = report.cases.find((each) => each.caseId === kept[Number(DIVERGING_ORDER) - 1]);
    expect(diverging?.diverged).toEqual([
      expect.objectContaining({ toolName: 'lookupOrder', args: { orderId: DIVERGING_ORDER, verbose: true } }),
    ]);
    const matching = report.cases.find((each) => each.caseId === kept[0]);
    expect(matching?.turns[0]?.new.toolCalls).toEqual([
      expect.objectContaining({ answer: 'recorded', result: 'order 1 left the warehouse' }),
    ]);
    expect(matching?.turns[0]?.new.reply).toBe('Order 1: order 1 left the warehouse.');
  }, 180_000);

  it('yiem eval fails under --fail-under, prints the regression first, and writes an HTML report Chromium shows side by side', async () => {
    expect(baseline).toBeDefined();
    const baselineFile = path.join(dir, 'baseline.json');
    await writeFile(baselineFile, JSON.stringify(baseline));
    await writeFile(
      path.join(dir, 'expectations.json'),
      JSON.stringify({ all: { replyMatches: '^Order \\d+' } }),
    );
    const [jsonFile, htmlFile] = [path.join(dir, 'report.json'), path.join(dir, 'report.html')];
    const regressed = kept[Number(REGRESSING_ORDER) - 1] as string;
    const run = await runYiem(
      [
        'eval',
        ...kept.slice(0, 14),
        '--task-queue',
        newAgent.taskQueue,
        '--expectations',
        path.join(dir, 'expectations.json'),
        '--baseline',
        baselineFile,
        '--json',
        jsonFile,
        '--html',
        htmlFile,
        '--fail-under',
        '0.95',
      ],
      oldAgent.address,
    );
    expect(run.code, run.stderr).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/: 13\/14 passed \(92\.9%\), 1 regressions against /);
    expect(lines[2]).toBe(`REGRESSION ${regressed}: the reply does not match /^Order \\d+/`);
    expect(run.stdout).toContain('Pass rate 0.929 is under --fail-under 0.95.');
    expect(run.stderr).toContain('14/14 cases replayed');
    const report = JSON.parse(await readFile(jsonFile, 'utf8')) as EvalReport;
    expect(report.summary).toMatchObject({ cases: 14, passed: 13, regressions: 1, diverged: 1 });
    expect(newRuns).toEqual([]);

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });
    try {
      const page = await browser.newPage();
      await page.goto(`file://${htmlFile}`);
      expect(await page.textContent('#summary')).toContain('13/14 passed (92.9%) · 1 regressions');
      const first = page.locator('section.case').first();
      expect(await first.locator('h2').textContent()).toBe(`regression ${regressed}`);
      expect(await first.locator('td.old').textContent()).toContain(`Order ${REGRESSING_ORDER}: order`);
      expect(await first.locator('td.old del').allTextContents()).toContain('warehouse.');
      expect(await first.locator('td.new ins').allTextContents()).toEqual([
        'I',
        'cannot',
        'help',
        'with',
        'that.',
      ]);
      const diverging = page.locator(`#case-${kept[Number(DIVERGING_ORDER) - 1]}`);
      expect(await diverging.locator('li.call.diverged').textContent()).toContain(
        'lookupOrder({"orderId":"7","verbose":true}) diverged',
      );
    } finally {
      await browser.close();
    }
  }, 180_000);
});
