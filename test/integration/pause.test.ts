import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { runYiem } from '../support/cli.ts';

const POLL = { timeout: 15_000, interval: 100 };

let slowStarted = false;
let releaseSlow: () => void = () => {};
const slow: AgentTool = {
  name: 'slow',
  label: 'Slow',
  description: 'Takes its time',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: async () => {
    slowStarted = true;
    await new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    return textResult('slow work done');
  },
};

const yiem = (args: string[]) => runYiem(args, inject('temporalAddress'));

describe('pause and resume', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [slow] });
  });
  afterAll(async () => agent?.close());
  afterEach(() => {
    agent.model.reset();
    slowStarted = false;
  });

  it('yiem pause stops the running turn after its tool batch, queued prompts wait, and yiem resume continues the same turn', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_s', name: 'slow', arguments: {} }] },
      { kind: 'text', text: 'Finished after the pause.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'You work slowly.' });
    const turn = conversation.send('work');
    await expect.poll(() => slowStarted, POLL).toBe(true);

    const paused = await yiem(['pause', conversation.id]);
    expect(paused.stdout).toContain(
      `Paused ${conversation.id}: its running turn stops at its next safe point`,
    );
    // Not in the middle of the batch: the running call finishes, then the turn stops.
    expect((await conversation.status()).state).toBe('running');
    releaseSlow();
    await expect.poll(async () => (await conversation.status()).stop?.reason, POLL).toBe('paused');
    expect(agent.model.requests).toHaveLength(1);
    const status = await yiem(['status', conversation.id]);
    expect(status.stdout).toContain(`${conversation.id}  paused  turn 1`);
    expect(status.stdout).toContain(`turn 1 paused at a safe point   |   yiem resume ${conversation.id}`);
    await expect
      .poll(
        async () => (await agent.client.listConversations({ status: 'paused' })).map((row) => row.id),
        POLL,
      )
      .toContain(conversation.id);

    // Queued: accepted now, answered by the same turn once it goes on.
    const queued = conversation.send('and this');
    await expect.poll(async () => (await conversation.status()).pendingMessages, POLL).toBe(1);

    const resumed = await yiem(['resume', conversation.id]);
    expect(resumed.stdout).toContain(`Resumed ${conversation.id}`);
    expect(await turn).toMatchObject({ turn: 1, status: 'completed', reply: 'Finished after the pause.' });
    expect(await queued).toMatchObject({ turn: 1, reply: 'Finished after the pause.' });
    const second = agent.model.requests[1]?.body.messages.filter((m) => m.role === 'user');
    expect(second?.map((m) => m.content)).toEqual(['work', 'and this']);
    expect((await conversation.status()).state).toBe('idle');
  });

  it('refuses prompts while paused with prompts "refuse", still takes posted messages, and answers them after the resume', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Read what was posted.' }, { kind: 'text', text: 'Open.' });
    const conversation = await agent.client.startConversation({ systemPrompt: 'You read.' });
    expect(await conversation.pause({ prompts: 'refuse' })).toBe(false);
    await expect(conversation.send('let me in')).rejects.toMatchObject({
      cause: {
        message: 'This conversation is paused by an operator and refuses new messages until it is resumed',
      },
    });
    await conversation.post('posted while paused');
    await expect.poll(async () => (await conversation.status()).pendingMessages, POLL).toBe(1);
    expect((await conversation.status()).state).toBe('paused');
    expect(agent.model.requests).toHaveLength(0);

    expect(await conversation.resume()).toBeNull();
    await expect
      .poll(async () => (await conversation.status()).lastTurn?.reply, POLL)
      .toBe('Read what was posted.');
    await expect(conversation.send('now it is open')).resolves.toMatchObject({ turn: 2, reply: 'Open.' });
  });
});
