import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptUpdate } from '../../src/contract/definitions.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

/** A tool that waits until the test releases it, so messages can arrive while it runs. */
let release: () => void = () => {};
let started: () => void = () => {};
const gate: AgentTool = {
  name: 'gate',
  label: 'Gate',
  description: 'Waits for the test',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: async () => {
    started();
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return textResult('gate opened');
  },
};

const loop: AgentTool = {
  name: 'loop',
  label: 'Loop',
  description: 'Does nothing',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: () => textResult('again'),
};

describe('messages, queries and turns', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [gate, loop] });
  });
  afterAll(async () => agent?.close());

  it('joins a message posted during tool execution before the next model call', async () => {
    const toolStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_gate', name: 'gate', arguments: {} }] },
      { kind: 'text', text: 'Noted both.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const reply = conversation.send('first');
    await toolStarted;
    await conversation.post('also this');
    expect((await conversation.status()).state).toBe('running');
    release();
    expect(await reply).toMatchObject({ turn: 1, status: 'completed', reply: 'Noted both.' });
    const sent = agent.model.lastRequest()?.body.messages.map((m) => m.role);
    expect(sent).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(agent.model.lastRequest()?.body.messages.at(-1)).toEqual({ role: 'user', content: 'also this' });
  });

  it('gives every prompt the reply of the turn that consumed it, turn by turn', async () => {
    agent.model.enqueue({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('a')).toMatchObject({ turn: 1, reply: 'one' });
    expect(await conversation.send('b')).toMatchObject({ turn: 2, reply: 'two' });
    const status = await conversation.status();
    expect(status).toMatchObject({ state: 'idle', turn: 2, messageCount: 4, pendingMessages: 0 });
    expect(status.lastTurn).toMatchObject({ turn: 2, status: 'completed', reply: 'two' });
  });

  it('a posted message starts a turn on its own', async () => {
    agent.model.enqueue({ kind: 'text', text: 'heard you' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await conversation.post('fire and forget');
    await expect
      .poll(async () => (await conversation.status()).lastTurn?.reply, { timeout: 10_000 })
      .toBe('heard you');
  });

  it('rejects empty and oversized messages with a clear error, and loses nothing', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '', maxMessageBytes: 10 });
    await expect(conversation.send('   ')).rejects.toThrow(/^A message must not be empty$/);
    await expect(conversation.send('ü'.repeat(6))).rejects.toThrow(
      /^A message may have at most 10 bytes; this one has 12$/,
    );
    // A client that skips those checks meets the same ones in the conversation.
    const unchecked = conversation.handle.executeUpdate(promptUpdate, { args: ['ü'.repeat(6)] });
    await expect(unchecked).rejects.toThrow(WorkflowUpdateFailedError);
    await expect(unchecked).rejects.toMatchObject({
      cause: { message: 'A message may have at most 10 bytes; this one has 12' },
    });
    agent.model.enqueue({ kind: 'text', text: 'fine' });
    expect((await conversation.send('short')).reply).toBe('fine');
    expect((await conversation.messages()).map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('stops a runaway tool loop at the per-turn model call limit with a clear message', async () => {
    agent.model.respond(() => ({ kind: 'toolCalls', toolCalls: [{ name: 'loop', arguments: {} }] }));
    const conversation = await agent.client.startConversation({ systemPrompt: '', maxModelCallsPerTurn: 3 });
    const result = await conversation.send('loop forever');
    agent.model.respond(undefined);
    expect(result.status).toBe('limitReached');
    expect(result.error).toContain('Stopped after 3 model calls in one turn');
    agent.model.enqueue({ kind: 'text', text: 'back to normal' });
    expect((await conversation.send('stop')).reply).toBe('back to normal');
  });

  it('ends: finishes the conversation, returns a summary, and refuses new prompts', async () => {
    agent.model.enqueue({ kind: 'text', text: 'bye' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await conversation.send('hello');
    expect(await conversation.end()).toEqual({
      turns: 1,
      messageCount: 2,
      lastTurn: expect.objectContaining({ turn: 1, status: 'completed', reply: 'bye' }),
      spend: expect.objectContaining({ modelCalls: 1 }),
    });
    const description = await conversation.handle.describe();
    expect(description.status.name).toBe('COMPLETED');
    await expect(conversation.send('anyone?')).rejects.toThrow();
  });

  it('takes the conversation id as the workflow id and refuses a duplicate', async () => {
    const id = `conv-${Date.now()}`;
    const conversation = await agent.client.startConversation({ id, systemPrompt: '' });
    expect(conversation.id).toBe(id);
    expect((await conversation.handle.describe()).workflowId).toBe(id);
    await expect(agent.client.startConversation({ id, systemPrompt: '' })).rejects.toThrow(
      /already started/i,
    );
  });
});
