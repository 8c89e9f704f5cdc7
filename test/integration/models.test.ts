import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import type { ConversationEvent } from '../../src/contract/types/events.ts';
import type { AssistantMessage } from '../../src/contract/types/messages.ts';
import type { ModelRouteContext } from '../../src/contract/types/models.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { FAST_MODEL_RETRY, startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import { historyText } from '../support/history.ts';
import { closedPort } from '../support/ports.ts';

/** The events of one turn, read from the conversation's event log once the turn has ended. */
async function turnEvents(conversation: Conversation, turn: number): Promise<ConversationEvent[]> {
  const events: ConversationEvent[] = [];
  for await (const event of conversation.events({ fromOffset: 0 })) {
    if (event.turn === turn) events.push(event);
    if (event.type === 'turnEnd' && event.turn === turn) break;
  }
  return events;
}

async function assistantModels(conversation: Conversation): Promise<string[]> {
  const messages = await conversation.messages();
  return messages.filter((message) => message.role === 'assistant').map((message) => message.model);
}

describe('several models on one worker, chosen per conversation, per turn and by a route', () => {
  let fast: ScriptedModel;
  let strong: ScriptedModel;
  let agent: TestAgent;
  const routed: ModelRouteContext[] = [];
  beforeAll(async () => {
    fast = await startScriptedModel({ respond: () => ({ kind: 'text', text: 'fast answer' }) });
    strong = await startScriptedModel({ respond: () => ({ kind: 'text', text: 'strong answer' }) });
    agent = await startTestAgent({
      worker: {
        models: {
          model: undefined,
          models: {
            fast: { baseURL: fast.baseURL, apiKey: 'fast-key-never-in-history', model: 'provider-fast' },
            strong: { baseURL: strong.baseURL, apiKey: 'strong-key-never-in-history' },
            routed: { baseURL: strong.baseURL, apiKey: 'strong-key-never-in-history' },
          },
          defaultModel: 'fast',
          // Conversations whose system prompt says "route" go by the route: turn 2 to `strong`, and a
          // model the worker does not have on turn 3.
          route: (context) => {
            routed.push(context);
            if (context.requested !== 'routed') return undefined;
            if (context.turn === 2) return 'strong';
            return context.turn === 3 ? 'missing' : undefined;
          },
        },
      },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await fast?.close();
    await strong?.close();
  });

  it("sends each turn to the conversation's model, or the prompt's, with that model's key", async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '', model: 'strong' });
    expect(await conversation.send('one')).toMatchObject({ status: 'completed', reply: 'strong answer' });
    expect(await conversation.send('two', { model: 'fast' })).toMatchObject({ reply: 'fast answer' });
    expect(await conversation.send('three')).toMatchObject({ reply: 'strong answer' });
    expect(await assistantModels(conversation)).toEqual(['strong', 'fast', 'strong']);
    expect(fast.lastRequest()?.body.model).toBe('provider-fast');
    expect(fast.lastRequest()?.headers.authorization).toBe('Bearer fast-key-never-in-history');
    expect(strong.lastRequest()?.headers.authorization).toBe('Bearer strong-key-never-in-history');
    expect(await historyText(conversation.handle)).not.toContain('key-never-in-history');
    await conversation.end();
    await replayAndRecord(conversation.handle, 'models-per-turn');
  });

  it("uses the worker's default model when nothing names one", async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('hi')).toMatchObject({ reply: 'fast answer' });
    expect(await assistantModels(conversation)).toEqual(['fast']);
  });

  it('lets the route pick per turn, and fails a turn clearly when it picks a model the worker lacks', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '', model: 'routed' });
    expect(await conversation.send('one')).toMatchObject({ reply: 'strong answer' });
    expect(await conversation.send('two')).toMatchObject({ reply: 'strong answer' });
    expect(await conversation.send('three')).toMatchObject({
      status: 'failed',
      error: `The model call failed: The worker's route asks for model "missing", which this worker does not serve (its models: fast, strong, routed)`,
    });
    expect(await conversation.send('four')).toMatchObject({ status: 'completed' });
    expect(await assistantModels(conversation)).toEqual(['routed', 'strong', 'routed']);
    const seen = routed.filter((context) => context.conversationId === conversation.id);
    expect(seen.map((context) => [context.turn, context.requested])).toEqual([
      [1, 'routed'],
      [2, 'routed'],
      [3, 'routed'],
      [4, 'routed'],
    ]);
    await conversation.end();
    await replayAndRecord(conversation.handle, 'models-route');
  });

  it('fails the turn naming an unknown model, and the conversation goes on', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '', model: 'gpt-9' });
    expect(await conversation.send('hi')).toMatchObject({
      status: 'failed',
      error:
        'The model call failed: The conversation asks for model "gpt-9", which this worker does not serve (its models: fast, strong, routed)',
    });
    expect(await conversation.send('then this', { model: 'fast' })).toMatchObject({
      status: 'completed',
      reply: 'fast answer',
    });
  });

  it('refuses prompt options that are not options before sending', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await expect(conversation.send('hi', { model: '' })).rejects.toThrow(
      'Prompt options: model must be a model name, got ""',
    );
  });
});

describe('fallbacks when a model cannot answer', () => {
  let broken: ScriptedModel;
  let backup: ScriptedModel;
  let port: number;
  let agent: TestAgent;
  beforeAll(async () => {
    port = await closedPort();
    broken = await startScriptedModel({
      respond: () => ({ kind: 'error', status: 500, message: 'overloaded' }),
    });
    backup = await startScriptedModel({ respond: () => ({ kind: 'text', text: 'backup answer' }) });
    agent = await startTestAgent({
      worker: {
        models: {
          model: undefined,
          models: {
            primary: { baseURL: `http://127.0.0.1:${port}/v1`, timeoutMs: 2_000 },
            broken: { baseURL: broken.baseURL },
            backup: { baseURL: backup.baseURL },
          },
          fallbacks: { primary: ['broken', 'backup'], broken: ['backup'] },
        },
      },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await broken?.close();
    await backup?.close();
  });

  it('goes on to the next model past a closed port and a 500, and the event log and transcript say so', async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      modelPolicy: FAST_MODEL_RETRY,
    });
    expect(await conversation.send('anyone?')).toMatchObject({ status: 'completed', reply: 'backup answer' });
    const events = await turnEvents(conversation, 1);
    const fallbacks = events.filter((event) => event.type === 'modelFallback');
    expect(fallbacks).toMatchObject([
      { from: 'primary', to: 'broken', cause: expect.stringContaining(`ECONNREFUSED 127.0.0.1:${port}`) },
      { from: 'broken', to: 'backup', cause: expect.stringContaining('answered 500: overloaded') },
    ]);
    expect(events.filter((event) => event.type === 'messageStart')).toMatchObject([{ model: 'backup' }]);
    const [reply] = (await conversation.messages()).filter(
      (message): message is AssistantMessage => message.role === 'assistant',
    );
    expect(reply?.model).toBe('backup');
    expect(reply?.fallbacks?.map(({ from, to }) => `${from}→${to}`)).toEqual([
      'primary→broken',
      'broken→backup',
    ]);
    await conversation.end();
    await replayAndRecord(conversation.handle, 'models-fallback');
  });

  it("ends the turn with the last model's error when every fallback fails", async () => {
    backup.respond(() => ({ kind: 'error', status: 503, message: 'backup down too' }));
    try {
      const conversation = await agent.client.startConversation({
        systemPrompt: '',
        model: 'broken',
        modelPolicy: { retry: { ...FAST_MODEL_RETRY.retry, maximumAttempts: 1 } },
      });
      expect(await conversation.send('anyone?')).toMatchObject({
        status: 'failed',
        error: `The model call failed: The model endpoint answered 503: backup down too (model backup at ${backup.baseURL})`,
      });
    } finally {
      backup.respond(() => ({ kind: 'text', text: 'backup answer' }));
    }
  });
});

describe('a rate-limited model, shared by every conversation through its task queue', () => {
  const PER_SECOND = 10;
  const CONVERSATIONS = 20;
  let limited: ScriptedModel;
  let agent: TestAgent;
  beforeAll(async () => {
    limited = await startScriptedModel({
      rateLimit: { requestsPerSecond: PER_SECOND },
      respond: () => ({ kind: 'text', text: 'within the limit' }),
    });
    agent = await startTestAgent({
      worker: {
        models: {
          model: undefined,
          models: {
            limited: { baseURL: limited.baseURL, rateLimit: { requestsPerMinute: PER_SECOND * 60 } },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await limited?.close();
  });

  it('completes every turn of many concurrent conversations', async () => {
    expect(agent.worker.modelQueues).toEqual({ limited: `${agent.taskQueue}-model-limited` });
    const conversations = await Promise.all(
      Array.from({ length: CONVERSATIONS }, () => agent.client.startConversation({ systemPrompt: '' })),
    );
    const results = await Promise.all(conversations.map((conversation) => conversation.send('go')));
    expect(results.map((result) => result.status)).toEqual(Array(CONVERSATIONS).fill('completed'));
    expect(limited.requestCount).toBe(CONVERSATIONS);
    // The Web UI shows the model call on the model's own queue, whose rate the server holds.
    expect(await historyText(conversations[0]?.handle as Conversation['handle'])).toContain(
      `"taskQueue":{"name":"${agent.taskQueue}-model-limited"`,
    );
  });
});
