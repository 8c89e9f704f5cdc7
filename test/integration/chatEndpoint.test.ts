import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage, type UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createChatEndpoint } from '../../src/client/chatEndpoint.ts';
import { type RunningChatEndpoint, serveChatEndpoint } from '../../src/client/chatServer.ts';
import type { UiMessageChunk } from '../../src/client/uiMessageChunks.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { NodeChat, recordingTransport } from '../support/aiChat.ts';

/** Lets the test decide when the slow tool finishes. */
let releaseSlow: () => void = () => {};
let slowStarted: () => void = () => {};

const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a city up',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  parallelToolExecute: true,
  execute: async (_id, args, _signal, onPartialResult) => {
    onPartialResult?.({ step: `asking about ${String(args.city)}` });
    return textResult(`${String(args.city)}: sunny\nhumidity 40%`);
  },
};

const slowLookup: AgentTool = {
  name: 'slowLookup',
  label: 'Slow lookup',
  description: 'Looks something up, slowly',
  inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
  parallelToolExecute: true,
  execute: async (_id, args, _signal, onPartialResult) => {
    onPartialResult?.({ step: 'started' });
    const released = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    slowStarted();
    await released;
    return textResult(`found ${String(args.topic)}`);
  },
};

/** Answers after `ms` milliseconds: a call that runs longer than its neighbours in a batch. */
const timedLookup: AgentTool = {
  name: 'timedLookup',
  label: 'Timed lookup',
  description: 'Looks something up, taking as long as it is told',
  inputSchema: { type: 'object', properties: { topic: { type: 'string' }, ms: { type: 'number' } } },
  parallelToolExecute: true,
  execute: async (_id, args) => {
    await new Promise((resolve) => setTimeout(resolve, Number(args.ms)));
    return textResult(`found ${String(args.topic)}`);
  },
};

const transfer: AgentTool = {
  name: 'transfer',
  label: 'Transfer',
  description: 'Sends money',
  inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } } },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: (_id, args) => textResult(`sent ${String(args.amount)} to ${String(args.to)}`),
};

const POLL = { timeout: 30_000, interval: 100 };

type ToolPart = Extract<UIMessage['parts'][number], { toolCallId: string }>;

function toolParts(message: UIMessage | undefined): ToolPart[] {
  return (message?.parts ?? []).filter((part): part is ToolPart => 'toolCallId' in part);
}

function text(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function assistantAnswering(approvalId: string): UIMessage {
  return {
    id: randomUUID(),
    role: 'assistant',
    parts: [
      {
        type: 'tool-transfer',
        toolCallId: 'c',
        state: 'approval-responded',
        input: {},
        approval: { id: approvalId, approved: true },
      },
    ],
  };
}

function userMessage(textOfIt: string): UIMessage {
  return { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: textOfIt }] };
}

/** Every chunk kind the endpoint writes is one of `ai`'s own. */
expectTypeOf<UiMessageChunk>().toExtend<UIMessageChunk>();

describe('the chat endpoint, through the AI SDK client', () => {
  let agent: TestAgent;
  let served: RunningChatEndpoint;
  const newChat = (init: { id?: string; messages?: UIMessage[] } = {}) => {
    const { transport, responses } = recordingTransport(served.url);
    const chat = new NodeChat({
      id: init.id ?? `chat-${randomUUID()}`,
      transport,
      ...(init.messages ? { messages: init.messages } : {}),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    return { chat, responses };
  };

  beforeAll(async () => {
    agent = await startTestAgent({ tools: [lookup, slowLookup, timedLookup, transfer], chunkSize: 6 });
    served = await serveChatEndpoint({
      client: agent.client,
      newConversation: () => ({ systemPrompt: 'You help.', toolExecution: 'parallel' }),
    });
  });
  afterAll(async () => {
    await served?.close();
    await agent?.close();
  });

  it('sends a message and streams the reply as one text part', async () => {
    const reply = 'Tokyo is sunny today, with a light breeze from the bay.';
    // Slow enough that the model call sends its text live rather than with its result.
    agent.model.enqueue({ kind: 'text', text: reply, deltaDelayMs: 120 });
    const { chat, responses } = newChat();
    await chat.sendMessage({ text: 'How is Tokyo?' });

    expect(chat.status).toBe('ready');
    expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(text(chat.lastMessage)).toBe(reply);
    const chunks = responses[0] ?? [];
    expect(chunks[0]).toEqual({ type: 'start', messageId: `${chat.id}-turn-1` });
    expect(chunks.filter((chunk) => chunk.type === 'text-delta').length).toBeGreaterThan(1);
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(chat.lastMessage?.metadata).toMatchObject({ yiem: { conversationId: chat.id, turn: 1 } });
    // The conversation got the message once, as its own.
    const conversation = agent.client.getConversation(chat.id);
    expect((await conversation.messages()).map((message) => message.role)).toEqual(['user', 'assistant']);
  });

  it("shows a batch's calls in the model's order, though a later one starts and ends first", async () => {
    // The long call's events go live after half a second; the short one's come with its result, at
    // once: the log has the short call's start and end before the long call's start.
    const batch = [
      { name: 'timedLookup', arguments: { topic: 'fjords', ms: 1500 } },
      { name: 'lookup', arguments: { city: 'Oslo' } },
    ];
    agent.model.enqueue(
      { kind: 'toolCalls', text: 'First.', toolCalls: batch },
      // Streamed slowly, so its end travels live, before the workflow has the reply.
      { kind: 'toolCalls', text: 'Second, slowly.', toolCalls: batch, deltaDelayMs: 150 },
      { kind: 'text', text: 'Fjords and sun.' },
    );
    const { chat, responses } = newChat();
    await chat.sendMessage({ text: 'Fjords and Oslo?' });

    expect(text(chat.lastMessage)).toBe('First.Second, slowly.Fjords and sun.');
    const chunks = responses[0] ?? [];
    const shown = chunks.flatMap((chunk) =>
      chunk.type === 'tool-input-available' ? [[chunk.toolName, chunk.input]] : [],
    );
    const modelOrder = batch.map((call) => [call.name, call.arguments]);
    expect(shown).toEqual([...modelOrder, ...modelOrder]);
    const names = new Map(
      chunks.flatMap((chunk) =>
        chunk.type === 'tool-input-available' ? [[chunk.toolCallId, chunk.toolName]] : [],
      ),
    );
    const ended = chunks.flatMap((chunk) =>
      chunk.type === 'tool-output-available' && !chunk.preliminary ? [chunk.toolCallId] : [],
    );
    // The short call ended first in both batches.
    expect([...new Set(ended)].map((id) => names.get(id))).toEqual([
      'lookup',
      'timedLookup',
      'lookup',
      'timedLookup',
    ]);
    expect(toolParts(chat.lastMessage).map((part) => [part.type, part.state, part.input])).toEqual(
      [...modelOrder, ...modelOrder].map(([name, input]) => [`tool-${name}`, 'output-available', input]),
    );
  });

  it('streams parallel tool calls with their inputs, progress and whole outputs', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        text: 'Let me look.',
        toolCalls: [
          { name: 'lookup', arguments: { city: 'Tokyo' } },
          { name: 'lookup', arguments: { city: 'Paris' } },
          { name: 'nonexistent', arguments: {} },
        ],
      },
      { kind: 'text', text: 'Both are sunny.' },
    );
    const { chat, responses } = newChat();
    await chat.sendMessage({ text: 'Weather in Tokyo and Paris?' });

    const message = chat.lastMessage;
    expect(message?.parts.filter((part) => part.type === 'step-start')).toHaveLength(2);
    expect(text(message)).toBe('Let me look.Both are sunny.');
    // The calls show in the model's order, the one answered in PREPARE too.
    const [tokyo, paris, unknown] = toolParts(message);
    expect(tokyo).toMatchObject({
      type: 'tool-lookup',
      state: 'output-available',
      input: { city: 'Tokyo' },
      output: { text: 'Tokyo: sunny\nhumidity 40%' },
    });
    expect(paris).toMatchObject({ state: 'output-available', input: { city: 'Paris' } });
    expect(paris).not.toMatchObject({ preliminary: true });
    expect(unknown).toMatchObject({ type: 'tool-nonexistent', state: 'output-error' });
    expect(unknown?.errorText).toMatch(/nonexistent/);
    const chunks = responses[0] ?? [];
    expect(chunks).toContainEqual({
      type: 'tool-output-available',
      toolCallId: tokyo?.toolCallId,
      output: { progress: { step: 'asking about Tokyo' } },
      preliminary: true,
    });
  });

  it('asks for an approval, and the answer in the next request lets the call run', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { name: 'transfer', arguments: { to: 'alice', amount: 5 } },
          { name: 'lookup', arguments: { city: 'Oslo' } },
        ],
      },
      { kind: 'text', text: 'Sent.' },
    );
    const { chat, responses } = newChat();
    await chat.sendMessage({ text: 'Send alice 5' });

    const asked = toolParts(chat.lastMessage).find((part) => part.type === 'tool-transfer');
    expect(asked).toMatchObject({ state: 'approval-requested', input: { to: 'alice', amount: 5 } });
    const approvalId = asked?.state === 'approval-requested' ? asked.approval.id : '';
    const conversation = agent.client.getConversation(chat.id);
    expect((await conversation.status()).pendingApprovals.map((approval) => approval.approvalId)).toEqual([
      approvalId,
    ]);

    // A new message while the turn waits is refused, naming what to answer first.
    const meanwhile = await fetch(served.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: chat.id, messages: [...chat.messages, userMessage('And Bob?')] }),
    });
    expect([meanwhile.status, await meanwhile.text()]).toEqual([409, expect.stringContaining(approvalId)]);

    await chat.addToolApprovalResponse({ id: approvalId, approved: true });
    await expect.poll(() => chat.status === 'ready' && text(chat.lastMessage), POLL).toBe('Sent.');

    expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    // In the model's order, whether the approval was asked or the lookup started first.
    const parts = toolParts(chat.lastMessage);
    expect(parts.map((part) => [part.type, part.state])).toEqual([
      ['tool-transfer', 'output-available'],
      ['tool-lookup', 'output-available'],
    ]);
    expect(parts.find((part) => part.type === 'tool-transfer')).toMatchObject({
      output: { text: 'sent 5 to alice' },
    });
    // The second response went on from the first one's end: no part came twice.
    const inputs = responses.flat().filter((chunk) => chunk.type === 'tool-input-available');
    expect(inputs).toHaveLength(2);
  });

  it('a batch that asks two approvals at once shows both before the response ends, and takes both answers', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { name: 'transfer', arguments: { to: 'alice', amount: 5 } },
          { name: 'transfer', arguments: { to: 'bob', amount: 7 } },
        ],
      },
      { kind: 'text', text: 'One sent, one not.' },
    );
    const { chat } = newChat();
    await chat.sendMessage({ text: 'Send alice 5 and bob 7' });

    const asked = toolParts(chat.lastMessage);
    expect(asked.map((part) => [part.state, part.input])).toEqual([
      ['approval-requested', { to: 'alice', amount: 5 }],
      ['approval-requested', { to: 'bob', amount: 7 }],
    ]);
    const [alice, bob] = asked.map((part) => (part.state === 'approval-requested' ? part.approval.id : ''));
    await chat.addToolApprovalResponse({ id: alice as string, approved: true });
    await chat.addToolApprovalResponse({
      id: bob as string,
      approved: false,
      reason: 'bob is not a customer',
    });
    await expect
      .poll(() => chat.status === 'ready' && text(chat.lastMessage), POLL)
      .toBe('One sent, one not.');
    expect(toolParts(chat.lastMessage).map((part) => part.state)).toEqual([
      'output-available',
      'output-denied',
    ]);
  });

  it('a denial reaches the conversation with its reason, and the call never runs', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ name: 'transfer', arguments: { to: 'mallory', amount: 900 } }] },
      { kind: 'text', text: 'Not sent.' },
    );
    const { chat } = newChat();
    await chat.sendMessage({ text: 'Send mallory 900' });
    const asked = toolParts(chat.lastMessage)[0];
    const approvalId = asked?.state === 'approval-requested' ? asked.approval.id : '';

    await chat.addToolApprovalResponse({ id: approvalId, approved: false, reason: 'not mallory' });
    await expect.poll(() => chat.status === 'ready' && text(chat.lastMessage), POLL).toBe('Not sent.');

    expect(toolParts(chat.lastMessage)[0]).toMatchObject({ type: 'tool-transfer', state: 'output-denied' });
    const results = (await agent.client.getConversation(chat.id).messages()).filter(
      (message) => message.role === 'toolResult',
    );
    expect(results).toMatchObject([{ isError: true }]);
    expect(JSON.stringify(results[0])).toMatch(/denied by the user: not mallory/);
  });

  it('a failed turn ends the stream with an error the chat shows', async () => {
    agent.model.enqueue({ kind: 'error', status: 401, message: 'invalid api key' });
    const { chat, responses } = newChat();
    await chat.sendMessage({ text: 'Hello?' });

    expect(chat.status).toBe('error');
    expect(chat.error?.message).toMatch(/invalid api key/);
    // The client stops reading at the error chunk.
    expect(responses[0]?.at(-1)).toEqual({
      type: 'error',
      errorText: expect.stringMatching(/invalid api key/),
    });
  });

  it('a reconnect mid-turn replays the whole running turn, then follows it live, without repeats', async () => {
    const started = new Promise<void>((resolve) => {
      slowStarted = resolve;
    });
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        text: 'Looking it up.',
        toolCalls: [
          { name: 'lookup', arguments: { city: 'Rome' } },
          { name: 'slowLookup', arguments: { topic: 'history' } },
        ],
      },
      { kind: 'text', text: 'Rome has a long history.' },
    );
    const first = newChat();
    const question = userMessage('Tell me about Rome');
    const sending = first.chat.sendMessage(question);
    await started;
    // A reload: the page has only the user's message and the chat id, and resumes.
    const second = newChat({ id: first.chat.id, messages: [question] });
    const resuming = second.chat.resumeStream();
    await expect
      .poll(
        () => toolParts(second.chat.lastMessage).find((part) => part.type === 'tool-slowLookup')?.state,
        POLL,
      )
      .toBe('output-available');
    releaseSlow();
    await Promise.all([sending, resuming]);

    for (const { chat } of [first, second]) {
      expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(text(chat.lastMessage)).toBe('Looking it up.Rome has a long history.');
      expect(toolParts(chat.lastMessage).map((part) => [part.type, part.state])).toEqual([
        ['tool-lookup', 'output-available'],
        ['tool-slowLookup', 'output-available'],
      ]);
    }
    expect(second.chat.lastMessage?.id).toBe(first.chat.lastMessage?.id);
    expect(second.chat.lastMessage?.parts).toEqual(first.chat.lastMessage?.parts);
    const replayed = second.responses[0] ?? [];
    const starts = replayed.filter(
      (chunk) => chunk.type === 'text-start' || chunk.type === 'tool-input-available',
    );
    expect(new Set(starts.map((chunk) => JSON.stringify(chunk))).size).toBe(starts.length);
  });

  it('a request sent again delivers its message once and answers with the turn that answered it', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Said once.' });
    const chatId = `chat-${randomUUID()}`;
    const { transport } = recordingTransport(served.url);
    const question = userMessage('Say it once');
    const send = async () => {
      const stream = await transport.sendMessages({
        chatId,
        messages: [question],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
      });
      const chunks: UIMessageChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      return chunks;
    };
    const first = await send();
    const again = await send();

    const said = (chunks: UIMessageChunk[]) =>
      chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : [])).join('');
    expect([said(first), said(again)]).toEqual(['Said once.', 'Said once.']);
    const messages = await agent.client.getConversation(chatId).messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(
      agent.model.requests.filter((request) => JSON.stringify(request.body).includes('Say it once')),
    ).toHaveLength(1);
  });

  it('a reconnect while no turn runs gets 204, and the chat stays as it was', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Done.' });
    const { chat } = newChat();
    await chat.sendMessage({ text: 'Quick one' });
    const again = newChat({ id: chat.id, messages: chat.messages });
    await again.chat.resumeStream();
    expect(again.responses).toEqual([]);
    expect(again.chat.messages).toEqual(chat.messages);
    expect(again.chat.status).toBe('ready');
  });

  it('refuses what it cannot do with a clear status and message', async () => {
    const post = (body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
      fetch(served.url, { method: 'POST', headers, body: JSON.stringify(body) });
    const missing = await post({ id: 'x', messages: [] });
    expect([missing.status, await missing.text()]).toEqual([400, expect.stringMatching(/messages/)]);
    const plain = await post({ id: 'x', messages: [userMessage('hi')] }, { 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);
    const regenerate = await post({ id: 'x', messages: [userMessage('hi')], trigger: 'regenerate-message' });
    expect([regenerate.status, await regenerate.text()]).toEqual([
      400,
      expect.stringMatching(/cannot regenerate/),
    ]);
    const badDelivery = await post({ id: 'x', messages: [userMessage('hi')], delivery: 'later' });
    expect([badDelivery.status, await badDelivery.text()]).toEqual([
      400,
      'A chat request\'s delivery must be one of steer, followUp, interrupt; got "later"',
    ]);
    // A new chat resumes on load before its conversation exists: nothing runs.
    const noChat = await fetch(`${served.url}/no-such-chat/stream`);
    expect(noChat.status).toBe(204);
    const noConversation = await post({ id: 'no-such-chat', messages: [assistantAnswering('x')] });
    expect([noConversation.status, await noConversation.text()]).toEqual([
      404,
      expect.stringMatching(/no-such-chat/),
    ]);
  });
});

describe('access to the chat endpoint', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({});
  });
  afterAll(async () => {
    await agent?.close();
  });

  it('refuses to listen beyond loopback without a token', async () => {
    await expect(serveChatEndpoint({ client: agent.client, host: '0.0.0.0' })).rejects.toThrow(
      /give it a token/,
    );
  });

  it('with a token, answers 401 to a request without it and streams to one with it', async () => {
    const served = await serveChatEndpoint({
      client: agent.client,
      host: '0.0.0.0',
      token: 'sesame',
      newConversation: () => ({ systemPrompt: 'You help.' }),
    });
    try {
      const url = served.url.replace('0.0.0.0', '127.0.0.1');
      const refused = newChatOn(url, {});
      await refused.chat.sendMessage({ text: 'hi' });
      expect(refused.chat.status).toBe('error');
      expect(refused.chat.error?.message).toMatch(/Authorization: Bearer/);
      const wrong = await fetch(`${url}/x/stream`, { headers: { authorization: 'Bearer open' } });
      expect([wrong.status, wrong.headers.get('www-authenticate')]).toEqual([401, 'Bearer']);

      agent.model.enqueue({ kind: 'text', text: 'Welcome.' });
      const allowed = newChatOn(url, { authorization: 'Bearer sesame' });
      await allowed.chat.sendMessage({ text: 'hi' });
      expect(text(allowed.chat.lastMessage)).toBe('Welcome.');
    } finally {
      await served.close();
    }
  });

  it('a loopback endpoint answers only requests that name a loopback host', async () => {
    const served = await serveChatEndpoint({ client: agent.client });
    try {
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const request = httpRequest(
          `${served.url}/x/stream`,
          { headers: { host: 'evil.example' } },
          (response) => {
            response.resume();
            resolve(response.statusCode);
          },
        );
        request.on('error', reject);
        request.end();
      });
      expect(status).toBe(403);
    } finally {
      await served.close();
    }
  });

  it('serves an Express-style app whose body parser read the request already', async () => {
    const endpoint = createChatEndpoint({
      client: agent.client,
      newConversation: () => ({ systemPrompt: 'You help.' }),
    });
    // What express.json() does before the route: the body is read, and parsed onto `req.body`.
    const server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        const parsed = parts.length > 0 ? JSON.parse(Buffer.concat(parts).toString('utf8')) : undefined;
        endpoint.node(Object.assign(request, { body: parsed }), response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      agent.model.enqueue({ kind: 'text', text: 'From Express.' });
      const { chat } = newChatOn(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`, {});
      await chat.sendMessage({ text: 'hi' });
      expect(text(chat.lastMessage)).toBe('From Express.');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('serves fetch-style runtimes with the same protocol', async () => {
    const endpoint = createChatEndpoint({
      client: agent.client,
      token: 'sesame',
      newConversation: () => ({ systemPrompt: 'You help.' }),
    });
    agent.model.enqueue({ kind: 'text', text: 'From fetch.' });
    const { transport, responses } = recordingTransport('http://app.example/api/chat', {
      headers: { authorization: 'Bearer sesame' },
      fetch: (input, init) => endpoint.fetch(new Request(input, init)),
    });
    const chat = new NodeChat({ id: `chat-${randomUUID()}`, transport });
    await chat.sendMessage({ text: 'hi' });
    expect(text(chat.lastMessage)).toBe('From fetch.');
    expect(responses[0]?.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    const refused = await endpoint.fetch(new Request('http://app.example/api/chat/x/stream'));
    expect(refused.status).toBe(401);
  });
});

function newChatOn(api: string, headers: Record<string, string>) {
  const { transport, responses } = recordingTransport(api, { headers });
  return { chat: new NodeChat({ id: `chat-${randomUUID()}`, transport }), responses };
}
