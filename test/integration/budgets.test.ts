import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentTool } from '../../src/contract/agents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentDefinition } from '../../src/contract/types/agents.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { SpendLimits } from '../../src/contract/types/spend.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { currentToolCall } from '../../src/infrastructure/toolCallContext.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { scriptAgents } from '../support/agentScript.ts';
import { runYiem } from '../support/cli.ts';

const PARENT = 'You coordinate research.';
const researcher: AgentDefinition = {
  name: 'researcher',
  description: 'Looks facts up, as long as it may',
  systemPrompt: 'You research without end.',
  tools: ['lookup'],
};

/** What each lookup was told of the budget left. */
const budgetsSeen: (SpendLimits | undefined)[] = [];
const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a fact up',
  inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
  parallelToolExecute: true,
  execute: () => {
    budgetsSeen.push(currentToolCall().remainingBudget);
    return textResult('one more fact');
  },
};

/** A tenth of a cent per token: each of the scripted model's requests costs about a tenth. */
const PRICE = { inputPerMillion: 1_000, outputPerMillion: 1_000 };

describe('budgets', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [lookup, agentTool(researcher)],
      prices: { scripted: PRICE },
    });
  });
  afterAll(async () => agent?.close());
  afterEach(() => {
    agent.model.reset();
    agent.model.respond(undefined);
    budgetsSeen.length = 0;
  });

  it("stops the parent at a safe point when its sub-agent spends the turn's cost budget, and resumes the same turn once it is raised", async () => {
    scriptAgents(agent.model, {
      [PARENT]: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_r', name: 'researcher', arguments: { task: 'find everything' } }],
            }
          : { kind: 'text', text: 'The research stopped at its budget; here is what we have.' },
      // The researcher never stops on its own: only its budget ends its task.
      [researcher.systemPrompt]: (_request, results) => ({
        kind: 'toolCalls',
        toolCalls: [{ id: `call_l${results}`, name: 'lookup', arguments: { topic: 'more' } }],
      }),
    });
    const conversation = await agent.client.startConversation({
      systemPrompt: PARENT,
      budget: { turn: { cost: 1 } },
    });
    const result = await conversation.send('research');
    expect(result).toMatchObject({
      turn: 1,
      status: 'budgetExhausted',
      budget: { scope: 'turn', limit: 'cost', allowed: 1 },
    });
    expect(result.budget?.spent.cost).toBeGreaterThanOrEqual(1);

    // The sub-agent ended its task at the budget it got from the parent; the parent stopped after the batch.
    const [research] = (await conversation.messages()).filter(
      (m): m is ToolResultMessage => m.role === 'toolResult',
    );
    expect(research?.content[0]?.text).toMatch(/^Agent researcher did not finish \(budgetExhausted\)/);
    const child = await agent.client.client.workflow
      .getHandle(`${conversation.id}.researcher.turn-1.call_r`)
      .result();
    expect(child.lastTurn).toMatchObject({
      status: 'budgetExhausted',
      budget: { scope: 'conversation', limit: 'cost' },
    });
    const childCalls = child.spend?.modelCalls ?? 0;
    expect(childCalls).toBeGreaterThan(1);
    // Each lookup was told what was left, less every time.
    const left = budgetsSeen.map((budget) => budget?.cost ?? Number.NaN);
    expect(left.length).toBeGreaterThan(0);
    expect(left.every((cost) => cost > 0 && cost < 1)).toBe(true);
    expect([...left].sort((a, b) => b - a)).toEqual(left);

    const status = await conversation.status();
    expect(status).toMatchObject({
      state: 'budgetExhausted',
      stop: { reason: 'budgetExhausted', exhausted: { limit: 'cost' } },
      spend: { turn: { modelCalls: 1 + childCalls, toolCalls: 1 + childCalls - 1 } },
    });
    await expect(conversation.resume()).rejects.toThrow(/The budget is still exhausted/);

    expect(await conversation.raiseBudget({ turn: { cost: null, modelCalls: 100 } })).toEqual({
      turn: { modelCalls: 100 },
    });
    expect(await conversation.resume()).toMatchObject({
      turn: 1,
      status: 'completed',
      reply: 'The research stopped at its budget; here is what we have.',
    });
    const after = await conversation.status();
    expect(after.state).toBe('idle');
    expect(after.spend.conversation.modelCalls).toBe(2 + childCalls);
    expect(after.spend.conversation.cost).toBeGreaterThan(1);

    // The event log tells the stop, the resume and the spend; the Web UI's search attribute the cost.
    const events: ConversationEventItem[] = [];
    for await (const event of conversation.events()) {
      events.push(event);
      if (event.type === 'turnEnd') break;
    }
    expect(events.filter((e) => e.type.startsWith('turn')).map((e) => e.type)).toEqual([
      'turnStart',
      'turnStopped',
      'turnResumed',
      'turnEnd',
    ]);
    expect(events.at(-1)).toMatchObject({ spend: { conversation: { cost: after.spend.conversation.cost } } });
    await expect
      .poll(
        async () =>
          (await agent.client.listConversations({ status: 'idle' })).find((row) => row.id === conversation.id)
            ?.cost,
        { timeout: 10_000, interval: 200 },
      )
      .toBe(after.spend.conversation.cost);
  });

  it("stops a turn before its first model call once the conversation's cost budget is spent, and a cancel ends it", async () => {
    agent.model.enqueue({ kind: 'text', text: 'A costly answer.' });
    const conversation = await agent.client.startConversation({
      systemPrompt: 'You answer.',
      budget: { conversation: { cost: 0.01 } },
    });
    const first = await conversation.send('hello');
    expect(first).toMatchObject({ status: 'completed', reply: 'A costly answer.' });
    const { spend } = await conversation.status();
    expect(spend.conversation.cost).toBeGreaterThan(0.01);

    expect(await conversation.send('again')).toMatchObject({
      turn: 2,
      status: 'budgetExhausted',
      budget: {
        scope: 'conversation',
        limit: 'cost',
        allowed: 0.01,
        spent: { cost: spend.conversation.cost },
      },
    });
    expect(agent.model.requests).toHaveLength(1);
    expect(await conversation.cancel()).toBe(true);
    await expect.poll(async () => (await conversation.status()).state).toBe('idle');
    expect((await conversation.status()).lastTurn).toMatchObject({ turn: 2, status: 'cancelled' });
    await conversation.end();
  });

  it('yiem status names the reached limit, and yiem budget raises it and resumes the turn', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_1', name: 'lookup', arguments: {} }] },
      { kind: 'text', text: 'Done after the raise.' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: 'You look up once.',
      budget: { turn: { modelCalls: 1 } },
    });
    expect(await conversation.send('look')).toMatchObject({ status: 'budgetExhausted' });
    const address = inject('temporalAddress');
    const status = await runYiem(['status', conversation.id], address);
    expect(status.stdout).toContain(`${conversation.id}  budgetExhausted  turn 1`);
    expect(status.stdout).toContain("The turn's budget of 1 model calls is reached (spent 1)");
    expect(status.stdout).toContain(`yiem budget ${conversation.id} --turn modelCalls=… --resume`);

    const raised = await runYiem(
      ['budget', conversation.id, '--turn', 'modelCalls=none', '--resume'],
      address,
    );
    expect(raised.stdout).toContain('turn budget: none');
    await expect
      .poll(async () => (await conversation.status()).lastTurn, { timeout: 15_000, interval: 100 })
      .toMatchObject({ turn: 1, status: 'completed', reply: 'Done after the raise.' });
  });
});
