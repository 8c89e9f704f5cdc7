import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalReport } from '../../src/client/evals/report.ts';
import { runEval } from '../../src/client/evals/runEval.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';
import { type ReplyHandler, type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

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

  beforeAll(async () => {
    [oldAgent, newAgent, judge] = await Promise.all([
      startTestAgent({ tools: [lookupTool(oldRuns)] }),
      startTestAgent({ tools: [lookupTool(newRuns)] }),
      startScriptedModel(),
    ]);
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
    const baseline = await runEval(oldAgent.client, {
      ...scoring,
      candidate: { taskQueue: oldAgent.taskQueue },
    });
    expect(baseline.summary).toMatchObject({ cases: 20, passed: 20, passRate: 1, diverged: 0 });

    const report: EvalReport = await runEval(newAgent.client, {
      ...scoring,
      candidate: { taskQueue: newAgent.taskQueue },
      baseline,
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
});
