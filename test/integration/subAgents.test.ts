import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import type { ConsoleListing } from '../../src/client/consoleApi.ts';
import { serveConsole } from '../../src/client/consoleServer.ts';
import { agentTool, handoffTool } from '../../src/contract/agents.ts';
import { YIEM_AGENT, YIEM_STATUS } from '../../src/contract/searchAttributes.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentDefinition } from '../../src/contract/types/agents.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import type { RecordedRequest } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { offeredTools, scriptAgents, systemPromptOf } from '../support/agentScript.ts';
import { replayAndRecord } from '../support/fixtures.ts';

const PARENT = 'You coordinate.';
const researcher: AgentDefinition = {
  name: 'researcher',
  description: 'Looks facts up',
  systemPrompt: 'You research.',
  tools: ['lookup'],
};
const critic: AgentDefinition = {
  name: 'critic',
  description: 'Finds flaws',
  systemPrompt: 'You criticise.',
};
const waiter: AgentDefinition = {
  name: 'waiter',
  description: 'Waits a long time',
  systemPrompt: 'You wait.',
  tools: ['waitForever'],
};
const banker: AgentDefinition = {
  name: 'banker',
  description: 'Moves money',
  systemPrompt: 'You bank.',
  tools: ['transferMoney'],
};
const manager: AgentDefinition = {
  name: 'manager',
  description: 'Delegates to the banker',
  systemPrompt: 'You manage.',
  tools: ['banker'],
};
const billing: AgentDefinition = {
  name: 'billing',
  description: 'Answers billing questions',
  systemPrompt: 'You are billing.',
  tools: ['lookup'],
};

const lookups: string[] = [];
const transfers: string[] = [];
let waitAborted = false;

const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a fact up',
  inputSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
  parallelToolExecute: true,
  execute: (_id, args) => {
    lookups.push(String(args.topic));
    return textResult(`fact about ${String(args.topic)}`);
  },
};
const waitForever: AgentTool = {
  name: 'waitForever',
  label: 'Wait',
  description: 'Waits until cancelled',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  policy: { heartbeatTimeout: '2 seconds' },
  execute: (_id, _args, signal) =>
    new Promise((_resolve, reject) => {
      signal?.addEventListener('abort', () => {
        waitAborted = true;
        reject(new Error('aborted'));
      });
    }),
};
const transferMoney: AgentTool = {
  name: 'transferMoney',
  label: 'Transfer Money',
  description: 'Sends money',
  inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: (_id, args) => {
    transfers.push(String(args.amount));
    return textResult(`sent ${String(args.amount)}`);
  },
};

const toolResults = async (conversation: Conversation): Promise<ToolResultMessage[]> =>
  (await conversation.messages()).filter((m): m is ToolResultMessage => m.role === 'toolResult');

async function nextEvent(
  conversation: Conversation,
  matches: (event: ConversationEventItem) => boolean,
): Promise<ConversationEventItem> {
  for await (const event of conversation.events()) if (matches(event)) return event;
  throw new Error('the conversation ended without the event');
}

describe('agents as tools and handoffs', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [
        lookup,
        waitForever,
        transferMoney,
        agentTool(researcher),
        agentTool(critic),
        agentTool(waiter),
        agentTool(banker),
        agentTool(manager),
        handoffTool(billing),
      ],
    });
  });
  afterAll(async () => agent?.close());
  afterEach(() => {
    agent.model.reset();
    agent.model.respond(undefined);
    lookups.length = 0;
    transfers.length = 0;
  });

  it('runs two sub-agents as concurrent child workflows whose replies are the tool results', async () => {
    // Each child's first model call answers only once the other child's has arrived: in sequential
    // order they would wait for each other forever, so finishing proves they ran at the same time.
    const arrived = { researcher: false, critic: false };
    const both = async (): Promise<void> => {
      while (!arrived.researcher || !arrived.critic) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    scriptAgents(agent.model, {
      [PARENT]: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [
                { id: 'call_r', name: 'researcher', arguments: { task: 'find the fact' } },
                { id: 'call_c', name: 'critic', arguments: { task: 'check the plan' } },
              ],
            }
          : { kind: 'text', text: 'Both agents answered.' },
      [researcher.systemPrompt]: async (_request, results) => {
        if (results > 0) return { kind: 'text', text: 'The fact is known.' };
        arrived.researcher = true;
        await both();
        return {
          kind: 'toolCalls',
          toolCalls: [{ id: 'call_l', name: 'lookup', arguments: { topic: 'tea' } }],
        };
      },
      [critic.systemPrompt]: async () => {
        arrived.critic = true;
        await both();
        return { kind: 'text', text: 'The plan is fine.' };
      },
    });
    const conversation = await agent.client.startConversation({ systemPrompt: PARENT });
    const result = await conversation.send('research and criticise');
    expect(result).toMatchObject({ status: 'completed', reply: 'Both agents answered.' });

    const [research, critique] = await toolResults(conversation);
    expect(research).toMatchObject({ toolCallId: 'call_r', toolName: 'researcher', isError: false });
    expect(research?.content[0]?.text).toBe('The fact is known.');
    expect(critique?.content[0]?.text).toBe('The plan is fine.');
    expect(lookups).toEqual(['tea']);

    const researcherId = `${conversation.id}.researcher.turn-1.call_r`;
    const criticId = `${conversation.id}.critic.turn-1.call_c`;
    expect(research?.details).toMatchObject({ agent: 'researcher', conversationId: researcherId });

    // Each child had its own system prompt and only its own tools.
    const requestsOf = (prompt: string) =>
      agent.model.requests.filter((request) => systemPromptOf(request) === prompt);
    const [researcherRequest] = requestsOf(researcher.systemPrompt);
    expect(requestsOf(researcher.systemPrompt).map(offeredTools)).toEqual([['lookup'], ['lookup']]);
    expect(requestsOf(critic.systemPrompt).map(offeredTools)).toEqual([[]]);
    expect(researcherRequest?.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'find the fact' });

    // The parent's history: both children started before either finished, and they are its children.
    const events = (await conversation.handle.fetchHistory()).events ?? [];
    const started = events.flatMap((event, index) =>
      event.childWorkflowExecutionStartedEventAttributes ? [index] : [],
    );
    const completed = events.flatMap((event, index) =>
      event.childWorkflowExecutionCompletedEventAttributes ? [index] : [],
    );
    expect(started).toHaveLength(2);
    expect(completed).toHaveLength(2);
    expect(Math.max(...started)).toBeLessThan(Math.min(...completed));
    for (const id of [researcherId, criticId]) {
      const child = await agent.client.client.workflow.getHandle(id).describe();
      expect(child.type).toBe('conversationWorkflow');
      expect(child.status.name).toBe('COMPLETED');
      expect(child.parentExecution?.workflowId).toBe(conversation.id);
    }
    // The child's transcript is its own conversation.
    const childMessages = await agent.client.getConversation(researcherId).messages();
    expect(childMessages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'assistant',
    ]);
  });

  it('starts the sub-agent of a conversation without live search attributes without them too', async () => {
    scriptAgents(agent.model, {
      [PARENT]: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_c', name: 'critic', arguments: { task: 'check the plan' } }],
            }
          : { kind: 'text', text: 'Checked.' },
      [critic.systemPrompt]: () => ({ kind: 'text', text: 'The plan is fine.' }),
    });
    const conversation = await agent.client.startConversation({
      systemPrompt: PARENT,
      liveSearchAttributes: false,
    });
    expect(await conversation.send('criticise')).toMatchObject({ status: 'completed', reply: 'Checked.' });
    const child = agent.client.client.workflow.getHandle(`${conversation.id}.critic.turn-1.call_c`);
    const attributes = (await child.describe()).typedSearchAttributes;
    expect(attributes.get(YIEM_AGENT)).toBe('critic');
    expect(attributes.get(YIEM_STATUS)).toBeUndefined();
    const upserted = ((await child.fetchHistory()).events ?? []).flatMap((event) =>
      Object.keys(event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
    );
    expect(upserted.filter((key) => key.startsWith('Yiem'))).toEqual([]);
  });

  it('cancels the sub-agent when the parent turn is cancelled', async () => {
    waitAborted = false;
    scriptAgents(agent.model, {
      [PARENT]: (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ id: 'call_w', name: 'waiter', arguments: { task: 'wait' } }] }
          : { kind: 'text', text: 'never' },
      [waiter.systemPrompt]: () => ({
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_wait', name: 'waitForever', arguments: {} }],
      }),
    });
    const conversation = await agent.client.startConversation({ systemPrompt: PARENT });
    const childId = `${conversation.id}.waiter.turn-1.call_w`;
    const reply = conversation.send('wait for me');
    const child = agent.client.getConversation(childId);
    await expect
      .poll(async () => (await child.status().catch(() => undefined))?.state, { timeout: 20_000 })
      .toBe('running');
    await expect
      .poll(() => agent.events.some((event) => event.toolName === 'waitForever'), { timeout: 20_000 })
      .toBe(true);

    expect(await conversation.cancel()).toBe(true);
    expect(await reply).toMatchObject({ status: 'cancelled' });
    const description = await child.handle.describe();
    expect(description.status.name).toBe('CANCELLED');
    await expect.poll(() => waitAborted, { timeout: 10_000 }).toBe(true);
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ toolCallId: 'call_w', isError: true });
    expect(result?.content[0]?.text).toContain('cancelled');
    await replayAndRecord(conversation.handle, 'sub-agent-cancelled-parent');
    await replayAndRecord(child.handle, 'sub-agent-cancelled-child');
  });

  it("shows a sub-agent's approval on the parent and lets the parent's client decide it", async () => {
    scriptAgents(agent.model, {
      [PARENT]: (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ id: 'call_b', name: 'banker', arguments: { task: 'pay 5' } }] }
          : { kind: 'text', text: 'Paid.' },
      [banker.systemPrompt]: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_pay', name: 'transferMoney', arguments: { amount: 5 } }],
            }
          : { kind: 'text', text: 'Transferred 5.' },
    });
    const conversation = await agent.client.startConversation({ systemPrompt: PARENT });
    const requested = nextEvent(conversation, (event) => event.type === 'approvalRequested');
    const reply = conversation.send('pay five');
    const event = await requested;
    const childId = `${conversation.id}.banker.turn-1.call_b`;
    const key = `${childId}/tool-1-call_pay`;
    expect(event).toMatchObject({
      type: 'approvalRequested',
      turn: 1,
      approval: {
        approvalId: key,
        toolCallId: 'call_pay',
        toolName: 'transferMoney',
        args: { amount: 5 },
        subAgent: { agent: 'banker', conversationId: childId, toolCallId: 'call_pay' },
      },
    });
    const status = await conversation.status();
    expect(status.pendingApprovals.map((approval) => approval.approvalId)).toEqual([key]);
    // The parent runs, but what it waits for is its sub-agent's approval, and it is listed so.
    expect(status.awaitingApproval).toEqual({ ownCalls: 0, subAgents: [childId] });
    const waiting = async () =>
      (await agent.client.listConversations({ status: 'awaitingApproval' }))
        .map((row) => row.id)
        .filter((id) => id.startsWith(conversation.id))
        .sort();
    await expect.poll(waiting, { timeout: 30_000 }).toEqual([conversation.id, childId].sort());
    expect(transfers).toEqual([]);
    // The console's list says whose approval from the listing alone, asking no conversation.
    const console_ = await serveConsole({ client: agent.client });
    try {
      const rows = (await (
        await fetch(`${console_.url}api/console/conversations?status=awaitingApproval`)
      ).json()) as ConsoleListing[];
      expect(rows.find((row) => row.id === conversation.id)?.awaitingApproval).toEqual({
        ownCalls: 0,
        subAgents: [childId],
      });
      expect(rows.find((row) => row.id === childId)?.awaitingApproval).toEqual({
        ownCalls: 1,
        subAgents: [],
      });
    } finally {
      await console_.close();
    }

    expect(await conversation.approve(key)).toMatchObject({
      approvalId: key,
      approved: true,
      decidedBy: 'person',
    });
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Paid.' });
    expect(transfers).toEqual(['5']);
    expect((await conversation.status()).pendingApprovals).toEqual([]);
    expect((await conversation.status()).awaitingApproval).toBeNull();
    await expect.poll(waiting, { timeout: 30_000 }).toEqual([]);
    const [banked] = await toolResults(conversation);
    expect(banked?.content[0]?.text).toBe('Transferred 5.');
    const childResults = await toolResults(agent.client.getConversation(childId));
    expect(childResults[0]).toMatchObject({ toolCallId: 'call_pay', isError: false });
    await expect(conversation.approve(key)).rejects.toThrow(/No tool call/);
    await replayAndRecord(conversation.handle, 'sub-agent-approval-parent');
    await replayAndRecord(agent.client.getConversation(childId).handle, 'sub-agent-approval-child');
  });

  it('passes a denial on the parent down to the sub-agent, whose model reads the reason', async () => {
    scriptAgents(agent.model, {
      [PARENT]: (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ id: 'call_b', name: 'banker', arguments: { task: 'pay 7' } }] }
          : { kind: 'text', text: 'Not paid.' },
      [banker.systemPrompt]: (request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_pay', name: 'transferMoney', arguments: { amount: 7 } }],
            }
          : { kind: 'text', text: `Refused: ${String(request.body.messages.at(-1)?.content)}` },
    });
    const conversation = await agent.client.startConversation({ systemPrompt: PARENT });
    const requested = nextEvent(conversation, (event) => event.type === 'approvalRequested');
    const resolved = nextEvent(conversation, (event) => event.type === 'approvalResolved');
    const reply = conversation.send('pay seven');
    const key = `${conversation.id}.banker.turn-1.call_b/tool-1-call_pay`;
    expect(await requested).toMatchObject({ approval: { approvalId: key } });
    await conversation.deny(key, 'too much');
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Not paid.' });
    expect(await resolved).toMatchObject({
      outcome: { approvalId: key, approved: false, decidedBy: 'person' },
    });
    expect(transfers).toEqual([]);
    const [banked] = await toolResults(conversation);
    expect(banked?.content[0]?.text).toBe(
      'Refused: Tool call "transferMoney" was denied by the user: too much',
    );
  });

  it("settles a sub-agent's waiting approval as cancelled on the parent when the parent turn is cancelled", async () => {
    scriptAgents(agent.model, {
      [PARENT]: () => ({
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_b', name: 'banker', arguments: { task: 'pay 9' } }],
      }),
      [banker.systemPrompt]: () => ({
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_pay', name: 'transferMoney', arguments: { amount: 9 } }],
      }),
    });
    const conversation = await agent.client.startConversation({ systemPrompt: PARENT });
    const requested = nextEvent(conversation, (event) => event.type === 'approvalRequested');
    const resolved = nextEvent(conversation, (event) => event.type === 'approvalResolved');
    const reply = conversation.send('pay nine');
    const key = `${conversation.id}.banker.turn-1.call_b/tool-1-call_pay`;
    expect(await requested).toMatchObject({ approval: { approvalId: key } });

    await conversation.cancel();
    expect(await reply).toMatchObject({ status: 'cancelled' });
    expect(await resolved).toMatchObject({
      outcome: { approvalId: key, approved: false, decidedBy: 'cancelled' },
    });
    expect((await conversation.status()).pendingApprovals).toEqual([]);
    const child = agent.client.getConversation(`${conversation.id}.banker.turn-1.call_b`);
    expect((await child.handle.describe()).status.name).toBe('CANCELLED');
    expect(transfers).toEqual([]);
    await expect(conversation.approve(key)).rejects.toThrow(/No tool call/);
  });

  it("brings a sub-sub-agent's approval up to the top conversation and its decision down again", async () => {
    scriptAgents(agent.model, {
      [PARENT]: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_m', name: 'manager', arguments: { task: 'get 3 paid' } }],
            }
          : { kind: 'text', text: 'Managed.' },
      [manager.systemPrompt]: (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ id: 'call_b', name: 'banker', arguments: { task: 'pay 3' } }] }
          : { kind: 'text', text: 'The banker paid.' },
      [banker.systemPrompt]: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_pay', name: 'transferMoney', arguments: { amount: 3 } }],
            }
          : { kind: 'text', text: 'Paid 3.' },
    });
    const conversation = await agent.client.startConversation({ systemPrompt: PARENT });
    const requested = nextEvent(conversation, (event) => event.type === 'approvalRequested');
    const reply = conversation.send('get three paid');
    const managerId = `${conversation.id}.manager.turn-1.call_m`;
    const bankerId = `${managerId}.banker.turn-1.call_b`;
    const key = `${managerId}/${bankerId}/tool-1-call_pay`;
    expect(await requested).toMatchObject({
      approval: {
        approvalId: key,
        toolCallId: 'call_pay',
        toolName: 'transferMoney',
        subAgent: { agent: 'banker', conversationId: bankerId, toolCallId: 'call_pay' },
      },
    });
    await conversation.approve(key);
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Managed.' });
    expect(transfers).toEqual(['3']);
    const bankerChild = await agent.client.client.workflow.getHandle(bankerId).describe();
    expect(bankerChild.parentExecution?.workflowId).toBe(managerId);
  });

  it('hands the conversation to another agent for the rest of the turn and later turns', async () => {
    scriptAgents(agent.model, {
      [PARENT]: () => ({
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_h', name: 'transfer_to_billing', arguments: {} }],
      }),
      [billing.systemPrompt]: (_request, results) => ({ kind: 'text', text: `Billing here (${results}).` }),
    });
    const conversation = await agent.client.startConversation({ systemPrompt: PARENT });
    const handoff = nextEvent(conversation, (event) => event.type === 'handoff');
    expect(await conversation.send('my invoice is wrong')).toMatchObject({
      status: 'completed',
      reply: 'Billing here (1).',
    });
    expect(await handoff).toMatchObject({ type: 'handoff', from: null, to: 'billing', turn: 1 });
    expect((await conversation.status()).agent).toBe('billing');
    expect(await conversation.send('and the next one?')).toMatchObject({ reply: 'Billing here (1).' });

    const requests = agent.model.requests;
    expect(requests.map(systemPromptOf)).toEqual([PARENT, billing.systemPrompt, billing.systemPrompt]);
    expect(offeredTools(requests[0] as RecordedRequest)).toContain('transfer_to_billing');
    expect(requests.slice(1).map(offeredTools)).toEqual([['lookup'], ['lookup']]);
    const [handedOff] = await toolResults(conversation);
    expect(handedOff).toMatchObject({ toolName: 'transfer_to_billing', isError: false });
    await replayAndRecord(conversation.handle, 'handoff');
  });
});
