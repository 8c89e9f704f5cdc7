import { execFile } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolArguments } from '../../src/contract/types/base.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';

const executed: { name: string; args: ToolArguments }[] = [];

const transferMoney: AgentTool = {
  name: 'transferMoney',
  label: 'Transfer Money',
  description: 'Sends money to someone',
  inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } } },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: (_id, args) => {
    executed.push({ name: 'transferMoney', args });
    return textResult(`Sent ${String(args.amount)} to ${String(args.to)}`);
  },
};

const deleteFiles: AgentTool = {
  name: 'deleteFiles',
  label: 'Delete Files',
  description: 'Deletes files matching a pattern',
  inputSchema: { type: 'object', properties: { pattern: { type: 'string' } } },
  parallelToolExecute: true,
  execute: (_id, args) => {
    executed.push({ name: 'deleteFiles', args });
    return textResult(`Deleted ${String(args.pattern)}`);
  },
};

/** Waits for the next event of a type on a conversation's live event stream. */
async function nextEvent(
  conversation: Conversation,
  type: ConversationEventItem['type'],
): Promise<ConversationEventItem> {
  for await (const event of conversation.events()) if (event.type === type) return event;
  throw new Error(`the conversation ended without a ${type} event`);
}

/** Visibility is eventually consistent: listings catch up within moments. */
const POLL = { timeout: 20_000, interval: 300 };

function yiem(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const toolResults = async (conversation: Conversation): Promise<ToolResultMessage[]> =>
  (await conversation.messages()).filter((m): m is ToolResultMessage => m.role === 'toolResult');

describe('tool calls that need a person to approve them', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [transferMoney, deleteFiles],
      hooks: {
        beforeToolCall: ({ toolName, args }) =>
          toolName === 'deleteFiles' && String(args.pattern).includes('*')
            ? { requireApproval: true, reason: 'deletes more than one file' }
            : undefined,
      },
    });
  });
  afterAll(async () => agent?.close());
  beforeEach(() => {
    executed.length = 0;
  });

  it('waits across a worker restart, then runs the tool once approved', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_pay', name: 'transferMoney', arguments: { to: 'Ana', amount: 100 } }],
      },
      { kind: 'text', text: 'Sent.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const requested = nextEvent(conversation, 'approvalRequested');
    const turn = conversation.send('Pay Ana 100');
    expect(await requested).toMatchObject({
      approval: { toolCallId: 'call_pay', toolName: 'transferMoney', args: { to: 'Ana', amount: 100 } },
    });
    const status = await conversation.status();
    expect(status.pendingApprovals).toMatchObject([
      { toolCallId: 'call_pay', toolName: 'transferMoney', reason: 'Transfer Money requires approval' },
    ]);

    // The worker goes away while the call waits; a new worker picks the conversation up from history.
    await agent.restartWorker();
    expect(executed).toEqual([]);
    expect((await conversation.status()).pendingApprovals.map((a) => a.toolCallId)).toEqual(['call_pay']);

    const resolved = nextEvent(conversation, 'approvalResolved');
    expect(await conversation.approve('call_pay')).toMatchObject({ approved: true, decidedBy: 'person' });
    expect(await turn).toMatchObject({ status: 'completed', reply: 'Sent.' });
    expect(await resolved).toMatchObject({ outcome: { toolCallId: 'call_pay', approved: true } });
    expect(executed).toEqual([{ name: 'transferMoney', args: { to: 'Ana', amount: 100 } }]);
    expect(await toolResults(conversation)).toMatchObject([
      { isError: false, content: [{ text: 'Sent 100 to Ana' }] },
    ]);
    expect((await conversation.status()).pendingApprovals).toEqual([]);
  });

  it('records who decided: the name a client gives, else its Temporal identity; refuses an overlong one', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_a', name: 'transferMoney', arguments: { to: 'Bo', amount: 1 } },
          { id: 'call_b', name: 'transferMoney', arguments: { to: 'Cy', amount: 2 } },
        ],
      },
      { kind: 'text', text: 'Both sent.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const turn = conversation.send('Pay Bo 1 and Cy 2');
    await expect.poll(async () => (await conversation.status()).pendingApprovals.length, POLL).toBe(2);

    await expect(conversation.approve('call_a', { decider: 'x'.repeat(201) })).rejects.toThrow(
      "A decision's decider must be a name of at most 200 characters",
    );
    const resolved = nextEvent(conversation, 'approvalResolved');
    expect(await conversation.approve('call_a', { decider: 'ops-bot' })).toMatchObject({
      approved: true,
      decidedBy: 'person',
      decider: 'ops-bot',
    });
    expect(await resolved).toMatchObject({ outcome: { toolCallId: 'call_a', decider: 'ops-bot' } });
    const identity = agent.client.client.options.identity;
    expect(await conversation.approve('call_b')).toMatchObject({ approved: true, decider: identity });
    expect(identity).toMatch(/@/);
    expect(await turn).toMatchObject({ status: 'completed', reply: 'Both sent.' });
  });

  it('on deny, never runs the tool and gives the model the reason (approval asked by beforeToolCall)', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_rm', name: 'deleteFiles', arguments: { pattern: '*.log' } }],
      },
      { kind: 'text', text: 'Understood, I left them.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const requested = nextEvent(conversation, 'approvalRequested');
    const turn = conversation.send('Clean up the logs');
    expect(await requested).toMatchObject({
      approval: { toolCallId: 'call_rm', reason: 'deletes more than one file' },
    });
    await conversation.deny('call_rm', 'keep the logs until the audit');

    expect(await turn).toMatchObject({ status: 'completed', reply: 'Understood, I left them.' });
    expect(executed).toEqual([]);
    const text = 'Tool call "deleteFiles" was denied by the user: keep the logs until the audit';
    expect(await toolResults(conversation)).toMatchObject([{ isError: true, content: [{ text }] }]);
    expect(agent.model.lastRequest()?.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_rm',
    });
    expect(JSON.stringify(agent.model.lastRequest()?.body.messages.at(-1))).toContain(
      'keep the logs until the audit',
    );
  });

  it('applies the timeout policy when nobody answers: deny or approve', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_late', name: 'transferMoney', arguments: { to: 'Bo', amount: 5 } }],
      },
      { kind: 'text', text: 'Nobody approved.' },
    );
    const denied = await agent.client.startConversation({ systemPrompt: '', approvalTimeout: '1 second' });
    expect(await denied.send('Pay Bo 5')).toMatchObject({ status: 'completed', reply: 'Nobody approved.' });
    expect(executed).toEqual([]);
    expect((await toolResults(denied))[0]?.content[0]?.text).toBe(
      'Tool call "transferMoney" was denied: approval timed out (nobody answered within 1 second)',
    );

    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_auto', name: 'transferMoney', arguments: { to: 'Cy', amount: 7 } }],
      },
      { kind: 'text', text: 'Paid.' },
    );
    const approved = await agent.client.startConversation({
      systemPrompt: '',
      approvalTimeout: '1 second',
      onApprovalTimeout: 'approve',
    });
    expect(await approved.send('Pay Cy 7')).toMatchObject({ status: 'completed', reply: 'Paid.' });
    expect(executed).toEqual([{ name: 'transferMoney', args: { to: 'Cy', amount: 7 } }]);
  });

  it('rejects a decision for a call that is not waiting, with a clear error, and keeps the conversation', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Hello.' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await conversation.send('hi');
    await expect(conversation.approve('call_nope')).rejects.toThrow(
      'No tool call "call_nope" is waiting for approval (waiting: none)',
    );
    agent.model.enqueue({ kind: 'text', text: 'Still here.' });
    expect(await conversation.send('again')).toMatchObject({ status: 'completed', reply: 'Still here.' });
  });

  it('yiem list shows it waiting, yiem deny refuses it with a reason, yiem approve explains a wrong id', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_cli', name: 'transferMoney', arguments: { to: 'Eve', amount: 9 } }],
      },
      { kind: 'text', text: 'Not sent.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const requested = nextEvent(conversation, 'approvalRequested');
    const turn = conversation.send('Pay Eve 9');
    await requested;
    const connection = ['--address', agent.address, '--task-queue', agent.taskQueue];
    await expect
      .poll(async () => (await yiem(['list', '--status', 'awaitingApproval', ...connection])).stdout, POLL)
      .toContain(`${conversation.id}  awaitingApproval  1 turns`);

    const wrong = await yiem(['approve', conversation.id, 'call_other', ...connection]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(
      'No tool call "call_other" is waiting for approval (waiting: tool-1-call_cli (transferMoney, tool call call_cli))',
    );

    const denied = await yiem([
      'deny',
      conversation.id,
      'call_cli',
      '--reason',
      'Eve is not a customer',
      ...connection,
    ]);
    expect(denied).toMatchObject({ code: 0, stdout: 'Denied call_cli.\n' });
    expect(await turn).toMatchObject({ status: 'completed', reply: 'Not sent.' });
    expect(executed).toEqual([]);
    expect((await toolResults(conversation))[0]?.content[0]?.text).toContain('Eve is not a customer');
  });

  it('keeps apart two waiting calls the model gave one tool call id (parallel mode), answered by approval id', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_dup', name: 'transferMoney', arguments: { to: 'Ana', amount: 1 } },
          { id: 'call_dup', name: 'transferMoney', arguments: { to: 'Bo', amount: 2 } },
        ],
      },
      { kind: 'text', text: 'One sent.' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      toolExecution: 'parallel',
    });
    const turn = conversation.send('Pay Ana 1 and Bo 2');
    await expect.poll(async () => (await conversation.status()).pendingApprovals.length, POLL).toBe(2);
    const [ana, bo] = (await conversation.status()).pendingApprovals;
    expect([ana?.approvalId, bo?.approvalId]).toEqual(['tool-1-call_dup', 'tool-1-call_dup-2']);
    expect([ana?.args.to, bo?.args.to]).toEqual(['Ana', 'Bo']);

    await expect(conversation.approve('call_dup')).rejects.toThrow(
      'Several calls with tool call id "call_dup" are waiting; answer one by its approval id: tool-1-call_dup, tool-1-call_dup-2',
    );
    expect(await conversation.approve('tool-1-call_dup')).toMatchObject({
      approvalId: 'tool-1-call_dup',
      toolCallId: 'call_dup',
      approved: true,
    });
    // With one of them left, its tool call id names it again.
    expect(await conversation.deny('call_dup', 'not Bo')).toMatchObject({
      approvalId: 'tool-1-call_dup-2',
      approved: false,
    });
    expect(await turn).toMatchObject({ status: 'completed', reply: 'One sent.' });
    expect(executed).toEqual([{ name: 'transferMoney', args: { to: 'Ana', amount: 1 } }]);
    expect((await toolResults(conversation)).map((result) => result.content[0]?.text)).toEqual([
      'Sent 1 to Ana',
      'Tool call "transferMoney" was denied by the user: not Bo',
    ]);
  });

  it('never lets a timeout silently overwrite a decision that reached the same workflow task', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_race', name: 'transferMoney', arguments: { to: 'Di', amount: 3 } }],
      },
      { kind: 'text', text: 'Settled.' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      approvalTimeout: '2 seconds',
    });
    const turn = conversation.send('Pay Di 3');
    await expect.poll(async () => (await conversation.status()).pendingApprovals.length, POLL).toBe(1);

    // With no worker, the timer fires and the decision arrives before any workflow task runs: the
    // next worker gets both in one activation.
    await agent.stopWorker();
    await expect
      .poll(
        async () =>
          (await conversation.handle.fetchHistory()).events?.some((e) => e.timerFiredEventAttributes),
        {
          timeout: 15_000,
        },
      )
      .toBe(true);
    const decision = conversation.approve('call_race').then(
      (outcome) => ({ outcome }),
      (error: Error) => ({ refused: error.message }),
    );
    // Time for the Update to be admitted before a worker polls (set-up only, nothing is timed).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await agent.startWorker();

    const answered = await decision;
    expect(await turn).toMatchObject({ status: 'completed', reply: 'Settled.' });
    const [result] = await toolResults(conversation);
    if ('outcome' in answered) {
      expect(answered.outcome).toMatchObject({ approved: true, decidedBy: 'person' });
      expect(result).toMatchObject({ isError: false, content: [{ text: 'Sent 3 to Di' }] });
      expect(executed).toEqual([{ name: 'transferMoney', args: { to: 'Di', amount: 3 } }]);
    } else {
      expect(answered.refused).toContain('is waiting for approval');
      expect(result?.content[0]?.text).toContain('approval timed out');
      expect(executed).toEqual([]);
    }
  });
});
