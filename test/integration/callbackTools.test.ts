import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { callbackTool } from '../../src/contract/agents.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { replayAndRecord } from '../support/fixtures.ts';

const readUserFile = callbackTool({
  name: 'readUserFile',
  label: 'Read a file on your machine',
  description: "Reads a file on the user's machine",
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  outputSchema: {
    type: 'object',
    properties: { bytes: { type: 'integer' } },
    required: ['bytes'],
  },
  timeout: '30 seconds',
});
const askUser = callbackTool({
  name: 'askUser',
  label: 'Ask the user',
  description: 'Asks the user a question on their client',
  inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
  timeout: '1 second',
});

const toolResults = async (conversation: Conversation): Promise<ToolResultMessage[]> =>
  (await conversation.messages()).filter((m): m is ToolResultMessage => m.role === 'toolResult');

async function collectTurn(conversation: Conversation, turn: number): Promise<ConversationEventItem[]> {
  const seen: ConversationEventItem[] = [];
  for await (const event of conversation.events()) {
    if (event.turn === turn) seen.push(event);
    if (event.type === 'turnEnd' && event.turn === turn) return seen;
  }
  return seen;
}

describe('callback tools, run by an attached client', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [readUserFile, askUser] });
  });
  afterAll(async () => agent?.close());
  afterEach(() => agent.model.reset());

  it("runs on the client that serves it, the model reads the client's result, and followers see the call", async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_read', name: 'readUserFile', arguments: { path: 'notes.txt' } }],
      },
      { kind: 'text', text: 'Your notes say hello.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Read files.' });
    const seenArgs: unknown[] = [];
    const controller = new AbortController();
    const served = conversation.serveCallbacks(
      {
        readUserFile: (args) => {
          seenArgs.push(args);
          return { text: 'hello from notes.txt', output: { bytes: 20 } };
        },
      },
      { signal: controller.signal },
    );
    const followed = collectTurn(conversation, 1);
    expect(await conversation.send('what do my notes say?')).toMatchObject({
      status: 'completed',
      reply: 'Your notes say hello.',
    });
    controller.abort();
    await served;
    expect(seenArgs).toEqual([{ path: 'notes.txt' }]);

    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({
      toolCallId: 'call_read',
      isError: false,
      details: { output: { bytes: 20 } },
    });
    expect(result?.content[0]?.text).toBe('hello from notes.txt');
    expect(agent.model.requests[1]?.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: 'hello from notes.txt',
    });
    const types = (await followed).map((event) => event.type);
    expect(types).toEqual(expect.arrayContaining(['toolStart', 'callbackRequested', 'toolEnd']));
    expect(types.indexOf('toolStart')).toBeLessThan(types.indexOf('callbackRequested'));
    expect(types.indexOf('callbackRequested')).toBeLessThan(types.indexOf('toolEnd'));
    expect((await conversation.status()).pendingCallbacks).toEqual([]);
    // The worker's eventSink hears of it like of any tool call.
    const sunk = agent.events.filter(
      (event) => event.toolCallId === 'call_read' && event.conversationId === conversation.id,
    );
    expect(sunk.map((event) => event.type)).toEqual(['toolExecutionStart', 'toolExecutionEnd']);
    expect(sunk[0]).toMatchObject({ toolName: 'readUserFile', args: { path: 'notes.txt' } });
    expect(sunk[1]).toMatchObject({ isError: false, result: { details: { output: { bytes: 20 } } } });
    await replayAndRecord(conversation.handle, 'callback-answered');
  });

  it('waits durably across a worker restart for a client that attaches later', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_late', name: 'readUserFile', arguments: { path: 'a.txt' } }],
      },
      { kind: 'text', text: 'Read it.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Read files.' });
    const reply = conversation.send('read a.txt');
    await expect
      .poll(async () => (await conversation.status()).pendingCallbacks.map((call) => call.toolCallId), {
        timeout: 20_000,
      })
      .toEqual(['call_late']);
    await agent.restartWorker();
    const callId = (await conversation.status()).pendingCallbacks[0]?.callId ?? 'none';
    await conversation.answerCallback(callId, { text: 'contents of a.txt', output: { bytes: 17 } });
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Read it.' });
    await expect(
      conversation.answerCallback(callId, { text: 'again', output: { bytes: 5 } }),
    ).rejects.toThrow(/No callback call/);
    expect((await toolResults(conversation))[0]?.content[0]?.text).toBe('contents of a.txt');
  });

  it('gives the model an error when the result does not match the output schema', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_bad', name: 'readUserFile', arguments: { path: 'b.txt' } }],
      },
      { kind: 'text', text: 'The client sent nonsense.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Read files.' });
    const controller = new AbortController();
    const served = conversation.serveCallbacks(
      { readUserFile: () => ({ text: 'oops', output: { bytes: 'many' } }) },
      { signal: controller.signal },
    );
    expect(await conversation.send('read b.txt')).toMatchObject({ status: 'completed' });
    controller.abort();
    await served;
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ toolCallId: 'call_bad', isError: true });
    expect(result?.content[0]?.text).toContain('does not match its output schema');
    expect(result?.content[0]?.text).toContain('/bytes');
    await replayAndRecord(conversation.handle, 'callback-output-rejected');
  });

  it('times out with a clear error to the model when no client answers, and the next turn works', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_ask', name: 'askUser', arguments: { question: 'Tea?' } }],
      },
      { kind: 'text', text: 'Nobody answered the question.' },
      { kind: 'text', text: 'Hello again.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Ask.' });
    expect(await conversation.send('ask me')).toMatchObject({
      status: 'completed',
      reply: 'Nobody answered the question.',
    });
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ toolCallId: 'call_ask', isError: true });
    expect(result?.content[0]?.text).toMatch(/no client answered within 1 second/);
    expect(agent.model.requests[1]?.body.messages.at(-1)).toMatchObject({ role: 'tool' });
    expect((await conversation.status()).pendingCallbacks).toEqual([]);
    expect(await conversation.send('hi')).toMatchObject({ status: 'completed', reply: 'Hello again.' });
    await replayAndRecord(conversation.handle, 'callback-timed-out');
  });

  it('reaches the model as an error when the handler throws on the client', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_throw', name: 'askUser', arguments: { question: 'x' } }] },
      { kind: 'text', text: 'It failed.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Ask.' });
    const controller = new AbortController();
    const served = conversation.serveCallbacks(
      {
        askUser: () => {
          throw new Error('no terminal');
        },
      },
      { signal: controller.signal },
    );
    expect(await conversation.send('ask')).toMatchObject({ status: 'completed' });
    controller.abort();
    await served;
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ isError: true });
    expect(result?.content[0]?.text).toBe('askUser failed on the client: no terminal');
  });
});
