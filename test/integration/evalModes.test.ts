import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { conversationsOf } from '../../src/client/evals/keptCases.ts';
import type { EvalReport } from '../../src/client/evals/report.ts';
import { runEval } from '../../src/client/evals/runEval.ts';
import type { EvalProgress } from '../../src/contract/evals.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';
import { type ReplyHandler, type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { type AgentWorker, createAgentWorker } from '../../src/worker/worker.ts';
import { startTestAgent, type TestAgent, workflowBundle } from '../support/agentHarness.ts';
import { runYiem } from '../support/cli.ts';
import { historyText } from '../support/history.ts';

const ORDERS = ['1', '2', '3'];
/** The new agent also tells the customer about this order: a call no kept conversation made. */
const NOTIFIED_ORDER = '3';
/** The candidate's model calls per second, held by its model's task queue. */
const CANDIDATE_PER_SECOND = 1;
/** The candidate's provider refuses more than this many requests in any one second. */
const PROVIDER_PER_SECOND = 4;

/** Every tool run, by tool, of one worker: what recorded mode must keep at nothing. */
type Runs = Record<string, string[]>;

function tool(name: string, runs: Runs, atMostOnce = false): ActivityTool {
  return {
    name,
    label: name,
    description: `${name} for an order`,
    parallelToolExecute: true,
    ...(atMostOnce ? { atMostOnce: true } : {}),
    inputSchema: { type: 'object', properties: { orderId: { type: 'string' } } },
    execute: async (_toolCallId, args) => {
      const orderId = String(args.orderId);
      runs[name] = [...(runs[name] ?? []), orderId];
      return textResult(`${name} ${orderId} done`);
    },
  };
}

/** The kept agent's tools, or the candidate's (which adds `notifyCustomer`). */
const tools = (runs: Runs, candidate: boolean): ActivityTool[] => [
  tool('lookupOrder', runs),
  tool('refund', runs, true),
  ...(candidate ? [tool('notifyCustomer', runs)] : []),
];

type Message = { role: string; content: string | null };
const orderOf = (messages: readonly Message[]): string =>
  /order (\w+)/.exec(messages.find((message) => message.role === 'user')?.content ?? '')?.[1] ?? '?';

/** Looks the order up and refunds it in one batch, then says what the tools said. */
function refunds(candidate: boolean): ReplyHandler {
  return (request) => {
    const messages = request.body.messages as Message[];
    const order = orderOf(messages);
    const results = messages.filter((message) => message.role === 'tool').map((message) => message.content);
    if (results.length > 0) return { kind: 'text', text: `Order ${order}: ${results.join('; ')}.` };
    const notify =
      candidate && order === NOTIFIED_ORDER
        ? [{ name: 'notifyCustomer', arguments: { orderId: order } }]
        : [];
    return {
      kind: 'toolCalls',
      toolCalls: [
        { name: 'lookupOrder', arguments: { orderId: order } },
        { name: 'refund', arguments: { orderId: order } },
        ...notify,
      ],
    };
  };
}

describe('eval modes, sources and the candidate rate limit', () => {
  const address = inject('temporalAddress');
  const keptRuns: Runs = {};
  const candidateRuns: Runs = {};
  let kept: TestAgent;
  let provider: ScriptedModel;
  let candidate: { worker: AgentWorker; running: Promise<void>; client: AgentClient; taskQueue: string };
  const keptIds: string[] = [];
  let dir: string;
  let recorded: EvalReport | undefined;

  beforeAll(async () => {
    const taskQueue = `eval-candidate-${Math.random().toString(36).slice(2)}`;
    [kept, provider, dir] = await Promise.all([
      startTestAgent({ tools: tools(keptRuns, false) }),
      startScriptedModel({ respond: refunds(true), rateLimit: { requestsPerSecond: PROVIDER_PER_SECOND } }),
      mkdtemp(path.join(tmpdir(), 'yiem-eval-modes-')),
    ]);
    kept.model.respond(refunds(false));
    const worker = await createAgentWorker({
      connection: { address, taskQueue },
      models: {
        models: {
          limited: {
            baseURL: provider.baseURL,
            apiKey: 'none',
            rateLimit: { requestsPerMinute: CANDIDATE_PER_SECOND * 60 },
          },
        },
      },
      tools: { tools: tools(candidateRuns, true), builtinTools: false },
      worker: { workflowBundle: await workflowBundle() },
    });
    candidate = { worker, running: worker.run(), client: new AgentClient({ address, taskQueue }), taskQueue };
    for (const order of ORDERS) {
      const conversation = await kept.client.startConversation({ systemPrompt: 'You refund orders.' });
      await conversation.send(`refund order ${order}`);
      await conversation.end();
      keptIds.push(conversation.id);
    }
    for (const name of Object.keys(keptRuns)) delete keptRuns[name];
  }, 120_000);
  afterAll(async () => {
    await candidate?.client.close();
    await candidate?.worker.shutdown();
    await candidate?.running;
    await Promise.all([kept?.close(), provider?.close()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('recorded mode answers a new call from its stand-in, reports Actions and latency, holds the model rate limit, and a second client follows the run', async () => {
    const progress: EvalProgress[] = [];
    const options = {
      conversations: keptIds,
      candidate: { taskQueue: candidate.taskQueue },
      concurrency: 2,
      runId: `modes-${Math.random().toString(36).slice(2)}`,
      standIns: { notifyCustomer: 'customer notified (stand-in)' },
      expectations: { cases: { [keptIds[0] as string]: { maxActions: 1 } } },
    };
    const first = runEval(candidate.client, { ...options, onProgress: (seen) => progress.push(seen) });
    await expect.poll(() => progress.length, { timeout: 30_000 }).toBeGreaterThan(0);
    // A second client attaches to the run under way by its id and gets the same report.
    const second = runEval(kept.client, options);
    const [report, attached] = await Promise.all([first, second]);
    recorded = report;
    expect(attached.cases.map((each) => each.conversationId)).toEqual(
      report.cases.map((each) => each.conversationId),
    );
    // Followed live: a case was running before the first finished, and every case finished once.
    expect(progress[0]).toMatchObject({ total: 3, finished: [] });
    expect(progress[0]?.running.length).toBeGreaterThan(0);
    expect(progress.at(-1)?.finished.toSorted()).toEqual(keptIds.toSorted());
    expect(provider.requests).toHaveLength(ORDERS.length * 2);

    // Recorded mode: no tool ran, on either worker.
    expect(candidateRuns).toEqual({});
    expect(keptRuns).toEqual({});
    expect(report.summary).toMatchObject({ cases: 3, passed: 2, diverged: 0 });
    const notified = report.cases.find((each) => each.caseId === keptIds[Number(NOTIFIED_ORDER) - 1]);
    expect(
      notified?.turns[0]?.new.toolCalls.map((call) => [call.toolName, call.answer, call.result]),
    ).toEqual([
      ['lookupOrder', 'recorded', 'lookupOrder 3 done'],
      ['refund', 'recorded', 'refund 3 done'],
      ['notifyCustomer', 'standIn', 'customer notified (stand-in)'],
    ]);
    expect(notified?.turns[0]?.new.reply).toBe(
      'Order 3: lookupOrder 3 done; refund 3 done; customer notified (stand-in).',
    );

    // Actions on both sides, per turn and per case, and the expectation on them.
    for (const each of report.cases) {
      expect(each.old.actions).toBeGreaterThan(1);
      expect(each.new.actions).toBeGreaterThan(1);
      expect(each.turns[0]?.new.actions).toBe(each.new.actions);
      expect(each.new.latencyMs).toBeGreaterThan(0);
      expect(each.old.workMs).toBeGreaterThan(0);
      expect(each.new.workMs).toBeGreaterThan(0);
      expect(each.turns[0]?.latencyMs).toBe(each.new.latencyMs);
    }
    const limited = report.cases.find((each) => each.caseId === keptIds[0]);
    expect(limited?.failures).toEqual([`${limited?.new.actions} Actions, more than 1`]);
    expect(report.summary.new.actions).toBe(report.cases.reduce((sum, each) => sum + each.new.actions, 0));

    // The replays' model calls went through the candidate's rate-limited model queue, whose rate
    // the server held: the provider, which allows a few more per second, never refused one.
    expect(
      await historyText(candidate.client.getConversation(notified?.conversationId as string).handle),
    ).toContain(`"taskQueue":{"name":"${candidate.taskQueue}-model-limited"`);
    expect(provider.rateLimitedCount).toBe(0);
  }, 120_000);

  it('live mode runs the tools but never an at-most-once one, unless allowed', async () => {
    const live = await runEval(candidate.client, {
      conversations: keptIds,
      candidate: { taskQueue: candidate.taskQueue },
      mode: 'live',
    });
    expect(live.mode).toBe('live');
    expect(candidateRuns.lookupOrder?.toSorted()).toEqual(ORDERS);
    expect(candidateRuns.notifyCustomer).toEqual([NOTIFIED_ORDER]);
    expect(candidateRuns.refund).toBeUndefined();
    const refund = live.cases.map((each) =>
      each.turns[0]?.new.toolCalls.find((call) => call.toolName === 'refund'),
    );
    expect(refund.map((call) => call?.answer)).toEqual(['recorded', 'recorded', 'recorded']);

    for (const name of Object.keys(candidateRuns)) delete candidateRuns[name];
    const allowed = await runEval(candidate.client, {
      conversations: keptIds,
      candidate: { taskQueue: candidate.taskQueue },
      mode: 'live',
      allowAtMostOnce: true,
    });
    expect(candidateRuns.refund?.toSorted()).toEqual(ORDERS);
    expect(allowed.cases.every((each) => each.turns[0]?.new.toolCalls.every((call) => !call.answer))).toBe(
      true,
    );
    expect(keptRuns).toEqual({});
    for (const name of Object.keys(candidateRuns)) delete candidateRuns[name];
  }, 120_000);

  it('yiem eval takes the kept conversations of a visibility query, or of exported history files, and passes --fail-under', async () => {
    expect(recorded).toBeDefined();
    const query = `TaskQueue = '${kept.taskQueue}'`;
    const standIns = path.join(dir, 'standIns.json');
    await writeFile(standIns, JSON.stringify({ notifyCustomer: 'customer notified (stand-in)' }));
    // Visibility lags behind the conversations' ends.
    await expect
      .poll(async () => (await conversationsOf(kept.client.client, query)).length, { timeout: 30_000 })
      .toBe(ORDERS.length);
    const fromQuery = path.join(dir, 'query.json');
    const byQuery = await runYiem(
      [
        'eval',
        '--query',
        query,
        '--task-queue',
        candidate.taskQueue,
        '--stand-ins',
        standIns,
        '--json',
        fromQuery,
        '--fail-under',
        '1',
      ],
      address,
    );
    expect(byQuery.code, byQuery.stderr).toBe(0);
    expect(byQuery.stdout).toMatch(/: 3\/3 passed \(100\.0%\)/);
    expect(byQuery.stdout).toMatch(/Actions \d+ → \d+ {3}turn time \d+ → \d+ ms {3}latency \d+ ms/);
    const queried = JSON.parse(await readFile(fromQuery, 'utf8')) as EvalReport;
    expect(queried.cases.map((each) => each.caseId).toSorted()).toEqual(keptIds.toSorted());

    const exported = path.join(dir, 'histories');
    const exporting = await runYiem(['export-histories', exported, '--query', query], address);
    expect(exporting.code, exporting.stderr).toBe(0);
    const fromFiles = path.join(dir, 'files.json');
    const byFiles = await runYiem(
      ['eval', '--histories', exported, '--task-queue', candidate.taskQueue, '--json', fromFiles],
      address,
    );
    expect(byFiles.code, byFiles.stderr).toBe(0);
    const files = JSON.parse(await readFile(fromFiles, 'utf8')) as EvalReport;
    // The files say what the server said of each kept conversation: turns, tool calls and Actions.
    const oldSide = (report: EvalReport) =>
      report.cases
        .map((each) => ({ caseId: each.caseId, old: each.old, turns: each.turns.map((turn) => turn.old) }))
        .toSorted((a, b) => a.caseId.localeCompare(b.caseId));
    expect(oldSide(files)).toEqual(oldSide(recorded as EvalReport));
    expect(files.summary).toMatchObject({ cases: 3, diverged: 1 });
    expect(candidateRuns.lookupOrder ?? []).toEqual([]);
  }, 180_000);
});
