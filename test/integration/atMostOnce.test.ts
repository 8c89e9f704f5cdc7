import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { agentTool } from '../../src/contract/agents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';
import { currentToolCall } from '../../src/index.ts';
import type { ScriptedReply } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { scriptAgents } from '../support/agentScript.ts';
import { counterServer } from '../support/mcpServers.ts';

/**
 * At-most-once tools whose first attempt is interrupted by its start-to-close timeout: the same
 * retry path as a lost worker (test/system/atMostOnceCrash.test.ts kills one), in one process.
 */

/** The payment service the tools call: what took effect, by idempotency key. */
const ledger = new Map<string, string>();
/** Every attempt that reached `execute`, as `<tool>.<attempt>`. */
const executions: string[] = [];

/** An attempt outlives its 1 s start-to-close timeout here, so Temporal runs the call again. */
const INTERRUPTIBLE = {
  startToCloseTimeout: '1 second',
  retry: { maximumAttempts: 3, initialInterval: '50 milliseconds' },
};

/** Takes effect, then hangs on its first attempt, as if its worker died right after the payment. */
function payment(name: string, overrides: Partial<ActivityTool> = {}): ActivityTool {
  return {
    name,
    label: name,
    description: 'Transfers money',
    inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    parallelToolExecute: false,
    policy: INTERRUPTIBLE,
    atMostOnce: true,
    execute: async (_toolCallId, args, signal) => {
      const { idempotencyKey, attempt } = currentToolCall();
      executions.push(`${name}.${attempt}`);
      ledger.set(idempotencyKey, `paid ${args.amount}`);
      if (attempt === 1) await sleep(10_000, undefined, { signal });
      return textResult(`paid ${args.amount}`);
    },
    ...overrides,
  };
}

const reconciledPayment = payment('reconciledPayment', {
  requiresApproval: true,
  reconcile: (idempotencyKey) => {
    const entry = ledger.get(idempotencyKey);
    return entry ? { done: textResult(`${entry} (found by reconcile)`) } : 'notDone';
  },
});
const blindPayment = payment('blindPayment');
/** Hangs before it takes effect on its first attempt: reconcile finds nothing, so it runs again. */
const latePayment: ActivityTool = {
  ...payment('latePayment'),
  execute: async (_toolCallId, args, signal) => {
    const { idempotencyKey, attempt } = currentToolCall();
    executions.push(`latePayment.${attempt}`);
    if (attempt === 1) await sleep(10_000, undefined, { signal });
    ledger.set(idempotencyKey, `paid ${args.amount}`);
    return textResult(`paid ${args.amount}`);
  },
  reconcile: (idempotencyKey) => (ledger.has(idempotencyKey) ? { done: textResult('paid') } : 'notDone'),
};
/** One attempt only: the interrupted call's activity fails for good, and the workflow answers. */
const oneShotPayment = payment('oneShotPayment', {
  policy: { ...INTERRUPTIBLE, retry: { maximumAttempts: 1 } },
});
/** Its reconcile cannot reach the payment service. */
const unreachablePayment = payment('unreachablePayment', {
  reconcile: () => {
    throw new Error('ledger service unreachable');
  },
});
const failingPayment = payment('failingPayment', {
  execute: () => {
    executions.push(`failingPayment.${currentToolCall().attempt}`);
    throw new Error('bank answered 503');
  },
});

const BANKER = 'You are the banker.';
const PARENT = 'You delegate payments.';

const toolResults = async (conversation: Conversation): Promise<ToolResultMessage[]> =>
  (await conversation.messages()).filter((m): m is ToolResultMessage => m.role === 'toolResult');

async function turnEvents(conversation: Conversation, turn: number): Promise<ConversationEventItem[]> {
  const seen: ConversationEventItem[] = [];
  for await (const event of conversation.events()) {
    if (event.turn === turn) seen.push(event);
    if (event.type === 'turnEnd' && event.turn === turn) break;
  }
  return seen;
}

const payOnce = (name: string): ScriptedReply[] => [
  { kind: 'toolCalls', toolCalls: [{ id: 'call_pay', name, arguments: { amount: 5 } }] },
  { kind: 'text', text: 'Done.' },
];

describe('at-most-once tools', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [
        reconciledPayment,
        blindPayment,
        latePayment,
        failingPayment,
        unreachablePayment,
        oneShotPayment,
        agentTool({
          name: 'banker',
          description: 'Pays',
          systemPrompt: BANKER,
          tools: ['reconciledPayment'],
        }),
      ],
    });
  });
  afterAll(async () => agent?.close());
  afterEach(() => {
    agent.model.reset();
    ledger.clear();
    executions.length = 0;
    agent.events.length = 0;
  });

  it('tells the model the outcome is unknown when an interrupted call has no reconcile, and runs it once', async () => {
    agent.model.enqueue(...payOnce('blindPayment'));
    const conversation = await agent.client.startConversation({ systemPrompt: 'Pay.' });
    const events = turnEvents(conversation, 1);
    expect(await conversation.send('pay 5')).toMatchObject({ status: 'completed', reply: 'Done.' });

    expect(executions).toEqual(['blindPayment.1']);
    expect([...ledger.values()]).toEqual(['paid 5']);
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ isError: true, details: { outcome: 'unknown', attempt: 2 } });
    const text = result?.content[0]?.text ?? '';
    expect(text).toContain('outcome unknown: the call may or may not have taken effect');
    expect(text).toContain('attempt 1 was interrupted');
    // The model read it in its next call.
    const toolMessage = agent.model.requests[1]?.body.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toBe(text);

    // By attempt: the interrupted attempt's end comes from its worker, which may send it late.
    const ends = (await events)
      .filter((event) => event.type === 'toolEnd')
      .sort((a, b) => a.attempt - b.attempt);
    expect(ends.map((event) => [event.attempt, event.willRetry, event.outcome])).toEqual([
      [1, true, undefined],
      [2, false, 'unknown'],
    ]);
    expect(
      agent.events.find((event) => event.type === 'toolExecutionEnd' && event.attempt === 2),
    ).toMatchObject({
      attempt: 2,
      isError: true,
      outcome: 'unknown',
    });
    // The Web UI shows the call's activity failed, with the same words.
    const history = await conversation.handle.fetchHistory();
    const failures = (history.events ?? []).flatMap(
      (event) => event.activityTaskFailedEventAttributes?.failure?.message ?? [],
    );
    expect(failures.some((message) => message.includes('outcome unknown'))).toBe(true);
  });

  it("gives the model reconcile's result when it finds an approved, interrupted call done, and runs it once", async () => {
    agent.model.enqueue(...payOnce('reconciledPayment'));
    const conversation = await agent.client.startConversation({ systemPrompt: 'Pay.' });
    const events = turnEvents(conversation, 1);
    const reply = conversation.send('pay 5');
    await expect.poll(async () => (await conversation.status()).pendingApprovals.length).toBe(1);
    await conversation.approve('tool-1-call_pay');
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Done.' });

    expect(executions).toEqual(['reconciledPayment.1']);
    expect(ledger.size).toBe(1);
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ isError: false, content: [{ text: 'paid 5 (found by reconcile)' }] });
    const reconciled = (await events).filter((event) => event.type === 'toolEnd' && event.outcome);
    expect(reconciled).toMatchObject([{ attempt: 2, isError: false, outcome: 'reconciled' }]);
  });

  it('runs an interrupted call again when reconcile finds it not done', async () => {
    agent.model.enqueue(...payOnce('latePayment'));
    const conversation = await agent.client.startConversation({ systemPrompt: 'Pay.' });
    expect(await conversation.send('pay 5')).toMatchObject({ status: 'completed' });
    expect(executions).toEqual(['latePayment.1', 'latePayment.2']);
    expect([...ledger.values()]).toEqual(['paid 5']);
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ isError: false, content: [{ text: 'paid 5' }] });
    expect(
      agent.events.find((event) => event.type === 'toolExecutionEnd' && event.attempt === 2),
    ).toMatchObject({
      attempt: 2,
      outcome: 'rerun',
    });
  });

  it('counts a reconcile that throws as unknown, naming its error', async () => {
    agent.model.enqueue(...payOnce('unreachablePayment'));
    const conversation = await agent.client.startConversation({ systemPrompt: 'Pay.' });
    expect(await conversation.send('pay 5')).toMatchObject({ status: 'completed' });
    expect(executions).toEqual(['unreachablePayment.1']);
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ isError: true, details: { outcome: 'unknown' } });
    expect(result?.content[0]?.text).toContain(
      'outcome unknown: the call may or may not have taken effect; attempt 1 was interrupted (its worker was lost, it timed out or it was stopped) and its reconcile() failed: ledger service unreachable. It was not run again',
    );
  });

  it('reports the outcome unknown when the interrupted call has no attempt left', async () => {
    agent.model.enqueue(...payOnce('oneShotPayment'));
    const conversation = await agent.client.startConversation({ systemPrompt: 'Pay.' });
    const events = turnEvents(conversation, 1);
    expect(await conversation.send('pay 5')).toMatchObject({ status: 'completed' });
    expect(executions).toEqual(['oneShotPayment.1']);
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ isError: true, details: { outcome: 'unknown' } });
    expect(result?.content[0]?.text).toMatch(
      /^Tool "oneShotPayment" outcome unknown: the call may or may not have taken effect; its activity failed for good: timed out \(START_TO_CLOSE\)\./,
    );
    // The workflow says so, beside the interrupted attempt's own end (which may come later, from its worker).
    const unknown = (await events).filter((event) => event.type === 'toolEnd' && event.outcome === 'unknown');
    expect(unknown).toMatchObject([{ attempt: 1, isError: true, willRetry: false }]);
  });

  it('does not retry an at-most-once tool that threw: the model reads the error', async () => {
    agent.model.enqueue(...payOnce('failingPayment'));
    const conversation = await agent.client.startConversation({ systemPrompt: 'Pay.' });
    expect(await conversation.send('pay 5')).toMatchObject({ status: 'completed' });
    expect(executions).toEqual(['failingPayment.1']);
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ isError: true });
    expect(result?.content[0]?.text).toBe('Tool "failingPayment" failed: bank answered 503');
  });

  it('works the same in a sub-agent, whose approval the parent gives', async () => {
    scriptAgents(agent.model, {
      [PARENT]: (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ id: 'call_b', name: 'banker', arguments: { task: 'pay 5' } }] }
          : { kind: 'text', text: 'Delegated.' },
      [BANKER]: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_pay', name: 'reconciledPayment', arguments: { amount: 5 } }],
            }
          : { kind: 'text', text: 'Banker paid.' },
    });
    const conversation = await agent.client.startConversation({ systemPrompt: PARENT });
    const reply = conversation.send('pay five');
    await expect.poll(async () => (await conversation.status()).pendingApprovals.length).toBe(1);
    const [pending] = (await conversation.status()).pendingApprovals;
    await conversation.approve(pending?.approvalId ?? '');
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Delegated.' });
    expect(executions).toEqual(['reconciledPayment.1']);
    expect(ledger.size).toBe(1);
    expect(
      agent.events.find((event) => event.type === 'toolExecutionEnd' && event.toolName === 'banker'),
    ).toMatchObject({
      isError: false,
    });
    const banker = agent.events.find((event) => event.type === 'toolExecutionEnd' && event.attempt === 2);
    expect(banker).toMatchObject({ toolName: 'reconciledPayment', outcome: 'reconciled' });
  });
});

describe('at-most-once MCP tools', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      worker: {
        tools: {
          mcpServers: {
            // `sleep` waits until cancelled: its attempts outlive their timeout.
            counter: { ...counterServer(), policy: INTERRUPTIBLE, atMostOnce: ['sleep'] },
          },
        },
      },
    });
  });
  afterAll(async () => agent?.close());

  it('reports an interrupted call of a listed tool as of unknown outcome; the others stay ordinary', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_sleep', name: 'counter__sleep', arguments: {} },
          { id: 'call_inc', name: 'counter__increment', arguments: {} },
        ],
      },
      { kind: 'text', text: 'Done.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Count.' });
    expect(await conversation.send('sleep and count')).toMatchObject({ status: 'completed' });
    const [slept, counted] = await toolResults(conversation);
    expect(slept).toMatchObject({ toolCallId: 'call_sleep', isError: true, details: { outcome: 'unknown' } });
    expect(slept?.content[0]?.text).toContain(
      'Tool "counter__sleep" outcome unknown: the call may or may not have taken effect; attempt 1 was interrupted',
    );
    // A tool the setting does not list is an ordinary one.
    expect(counted).toMatchObject({ toolCallId: 'call_inc', isError: false });
    expect(counted?.content[0]?.text).toMatch(/^count 1 /);
  });
});
