import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postSignal, promptUpdate } from '../../src/contract/definitions.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { Message, ToolResultMessage, UserMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { runYiem } from '../support/cli.ts';
import { replayAndRecord } from '../support/fixtures.ts';

/** `slow` calls that started, and a way to let them finish. */
let slowStarted: string[] = [];
let releaseSlow: () => void = () => {};
let slowReleased: Promise<void> = Promise.resolve();
/** `wait` calls that started, and those whose `signal` aborted. */
let waitStarted: string[] = [];
let stoppedWaiting: string[] = [];

const slow: AgentTool = {
  name: 'slow',
  label: 'Slow',
  description: 'Answers once the test lets it',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: async (toolCallId) => {
    slowStarted.push(toolCallId);
    await slowReleased;
    return textResult('slow result');
  },
};

const quick: AgentTool = {
  name: 'quick',
  label: 'Quick',
  description: 'Answers at once',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: () => textResult('quick result'),
};

const wait: AgentTool = {
  name: 'wait',
  label: 'Wait',
  description: 'Waits until cancelled',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  // Cancellation reaches a running tool through its heartbeats.
  policy: { heartbeatTimeout: '1 second' },
  execute: (toolCallId, _args, signal) => {
    waitStarted.push(toolCallId);
    return new Promise((_resolve, reject) => {
      signal?.addEventListener('abort', () => {
        stoppedWaiting.push(toolCallId);
        reject(new Error('stopped waiting'));
      });
    });
  },
};

function userTexts(messages: readonly Message[]): Pick<UserMessage, 'content' | 'delivery' | 'turn'>[] {
  return messages
    .filter((message): message is UserMessage => message.role === 'user')
    .map(({ content, delivery, turn }) => ({ content, delivery, turn }));
}

describe('steering, follow-up and interrupt', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [slow, quick, wait] });
  });
  afterAll(async () => agent?.close());
  beforeEach(() => {
    agent.model.reset();
    slowStarted = [];
    waitStarted = [];
    stoppedWaiting = [];
    slowReleased = new Promise((resolve) => {
      releaseSlow = resolve;
    });
  });

  /** What the model's request `index` (0-based) ended with: the roles, and the user texts. */
  const requestTail = (index: number, count: number) =>
    agent.model.requests[index]?.body.messages
      .slice(-count)
      .map((message) => (message.role === 'user' ? `user: ${String(message.content)}` : message.role));

  it('delivers a steer message between two tool batches of one turn: the second model call reads it', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }] },
      { kind: 'toolCalls', toolCalls: [{ id: 'call_quick', name: 'quick', arguments: {} }] },
      { kind: 'text', text: 'Both done, in Celsius.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const reply = conversation.send('check the weather');
    await expect.poll(() => slowStarted, { timeout: 10_000 }).toEqual(['call_slow']);
    const steered = conversation.send('use Celsius', { delivery: 'steer' });
    await expect.poll(async () => (await conversation.status()).pendingMessages).toBe(1);
    releaseSlow();

    const result = { turn: 1, status: 'completed', reply: 'Both done, in Celsius.' };
    expect(await reply).toMatchObject(result);
    expect(await steered).toMatchObject(result);
    expect(agent.model.requestCount).toBe(3);
    expect(requestTail(1, 3)).toEqual(['assistant', 'tool', 'user: use Celsius']);
    expect(userTexts(await conversation.messages())).toEqual([
      { content: 'check the weather', delivery: 'steer', turn: 1 },
      { content: 'use Celsius', delivery: 'steer', turn: 1 },
    ]);
    expect(await conversation.turnResult(1)).toMatchObject(result);
    await replayAndRecord(conversation.handle, 'delivery-steer');
  });

  it('holds a follow-up until the running turn ends, then answers it in a turn of its own', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }] },
      { kind: 'text', text: 'The first answer.' },
      { kind: 'text', text: 'The follow-up answer.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const reply = conversation.send('first question');
    await expect.poll(() => slowStarted, { timeout: 10_000 }).toEqual(['call_slow']);
    const followUp = conversation.send('and a second one', { delivery: 'followUp' });
    await expect.poll(async () => (await conversation.status()).pendingMessages).toBe(1);
    releaseSlow();

    expect(await reply).toMatchObject({ turn: 1, status: 'completed', reply: 'The first answer.' });
    expect(await followUp).toMatchObject({ turn: 2, status: 'completed', reply: 'The follow-up answer.' });
    expect(requestTail(1, 2)).toEqual(['assistant', 'tool']);
    expect(requestTail(2, 1)).toEqual(['user: and a second one']);
    expect(userTexts(await conversation.messages())).toEqual([
      { content: 'first question', delivery: 'steer', turn: 1 },
      { content: 'and a second one', delivery: 'followUp', turn: 2 },
    ]);
    await replayAndRecord(conversation.handle, 'delivery-follow-up');
  });

  it('interrupts a long tool: it is cancelled, its result says why, and the message is read at once', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_wait', name: 'wait', arguments: {} }] },
      { kind: 'text', text: 'Stopped; here is the short version.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const reply = conversation.send('do the long thing');
    await expect.poll(() => waitStarted, { timeout: 10_000 }).toEqual(['call_wait']);
    const interrupt = conversation.send('stop, the short version please', { delivery: 'interrupt' });

    const result = { turn: 1, status: 'completed', reply: 'Stopped; here is the short version.' };
    expect(await interrupt).toMatchObject(result);
    expect(await reply).toMatchObject(result);
    await expect.poll(() => stoppedWaiting, { timeout: 10_000 }).toEqual(['call_wait']);
    const results = (await conversation.messages()).filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(results.map((each) => [each.toolCallId, each.isError, each.content[0]?.text])).toEqual([
      [
        'call_wait',
        true,
        'Tool "wait" was interrupted by a new message before it finished; the message follows.',
      ],
    ]);
    expect(requestTail(1, 3)).toEqual(['assistant', 'tool', 'user: stop, the short version please']);
    await replayAndRecord(conversation.handle, 'delivery-interrupt');
  });

  it('adds a message sent again with the same key once: a retried send waits for the same turn', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }] },
      { kind: 'text', text: 'Answered once.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const first = conversation.send('the question', { key: 'question-1', updateId: 'attempt-1' });
    await expect.poll(() => slowStarted, { timeout: 10_000 }).toEqual(['call_slow']);
    // The client retries through a new Update (as after a continue-as-new), and posts a note twice.
    const retried = await conversation.submit('the question', { key: 'question-1', updateId: 'attempt-2' });
    await conversation.post('a note', { key: 'note-1' });
    await conversation.post('a note', { key: 'note-1' });
    await expect.poll(async () => (await conversation.status()).pendingMessages).toBe(1);
    releaseSlow();

    const result = { turn: 1, status: 'completed', reply: 'Answered once.' };
    expect(await first).toMatchObject(result);
    expect(await retried.result()).toMatchObject(result);
    expect(userTexts(await conversation.messages()).map((message) => message.content)).toEqual([
      'the question',
      'a note',
    ]);
    expect(agent.model.requestCount).toBe(2);
    await replayAndRecord(conversation.handle, 'delivery-same-key');
  });

  it('takes the delivery from the raw prompt Update and post Signal, and from yiem send --delivery', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }] },
      { kind: 'text', text: 'Turn one.' },
      { kind: 'text', text: 'Turn two.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const { handle } = conversation;
    // The payloads of clients from before deliveries still work: the text alone.
    const reply = handle.executeUpdate(promptUpdate, { args: ['plain text, as before'] });
    await expect.poll(() => slowStarted, { timeout: 10_000 }).toEqual(['call_slow']);
    await handle.signal(postSignal, 'a raw steer', { delivery: 'steer', key: 'raw-steer' });
    const rawFollowUp = handle.executeUpdate(promptUpdate, {
      args: ['a raw follow-up', { delivery: 'followUp' }],
    });
    await expect.poll(async () => (await conversation.status()).pendingMessages).toBe(2);
    const sent = runYiem(
      [
        'send',
        '--id',
        conversation.id,
        '--task-queue',
        agent.taskQueue,
        '--delivery',
        'followUp',
        'from the shell',
      ],
      agent.address,
    );
    await expect.poll(async () => (await conversation.status()).pendingMessages, { timeout: 30_000 }).toBe(3);
    releaseSlow();

    expect(await reply).toMatchObject({ turn: 1, reply: 'Turn one.' });
    expect(await rawFollowUp).toMatchObject({ turn: 2, reply: 'Turn two.' });
    const shell = await sent;
    expect(shell.stdout).toContain('Turn two.');
    expect(shell.code).toBe(0);
    expect(userTexts(await conversation.messages())).toEqual([
      { content: 'plain text, as before', delivery: 'steer', turn: 1 },
      { content: 'a raw steer', delivery: 'steer', turn: 1 },
      { content: 'a raw follow-up', delivery: 'followUp', turn: 2 },
      { content: 'from the shell', delivery: 'followUp', turn: 2 },
    ]);
    const refused = await handle
      .executeUpdate(promptUpdate, { args: ['bad', { delivery: 'soon' as never }] })
      .then(
        () => 'accepted',
        (error: unknown) => String((error as { cause?: Error }).cause?.message),
      );
    expect(refused).toBe('delivery must be one of steer, followUp, interrupt; got "soon"');
  });
});
