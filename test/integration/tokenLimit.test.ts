import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

// A window of 2 s (`windowMs`, a test-only shortening of the minute) and room for two calls in it:
// each call sends about 130 tokens (a 400-character prompt and the request around it).
const WINDOW_MS = 2_000;
const TOKENS_PER_WINDOW = 300;
const CONVERSATIONS = 5;

describe('a model with tokensPerMinute, shared by every conversation through its limiter workflow', () => {
  let limited: ScriptedModel;
  let agent: TestAgent;
  beforeAll(async () => {
    limited = await startScriptedModel({ respond: () => ({ kind: 'text', text: 'within the tokens' }) });
    agent = await startTestAgent({
      worker: {
        models: {
          model: undefined,
          models: {
            limited: {
              baseURL: limited.baseURL,
              rateLimit: {
                requestsPerMinute: 6_000,
                tokensPerMinute: TOKENS_PER_WINDOW,
                windowMs: WINDOW_MS,
              },
            },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await limited?.close();
  });

  it('spreads the calls so that no window holds more tokens than the limit, and every turn completes', async () => {
    const conversations = await Promise.all(
      Array.from({ length: CONVERSATIONS }, () => agent.client.startConversation({ systemPrompt: '' })),
    );
    const prompts = conversations.map((_, index) => `${index} ${'x'.repeat(400)}`);
    const results = await Promise.all(
      conversations.map((conversation, index) => conversation.send(prompts[index] as string)),
    );
    expect(results.map((result) => result.status)).toEqual(Array(CONVERSATIONS).fill('completed'));

    // Each call's tokens as the scripted server reported them, at the time the server received it.
    const calls = await Promise.all(
      conversations.map(async (conversation, index) => {
        const reply = (await conversation.messages()).find((message) => message.role === 'assistant');
        const request = limited.requests.find((each) =>
          JSON.stringify(each.body.messages).includes(prompts[index] as string),
        );
        return { at: request?.receivedAt as number, tokens: reply?.usage?.totalTokens as number };
      }),
    );
    expect(
      calls.every((call) => call.tokens > TOKENS_PER_WINDOW / 3 && call.tokens <= TOKENS_PER_WINDOW / 2),
    ).toBe(true);
    // The limiter reserves at its own clock, a moment before each request reaches the server: the
    // windows checked here are a quarter shorter for that. Unlimited, all five arrive within them.
    const checked = WINDOW_MS * 0.75;
    for (const call of calls) {
      const inWindow = calls.filter((other) => other.at <= call.at && other.at > call.at - checked);
      expect(inWindow.reduce((sum, other) => sum + other.tokens, 0)).toBeLessThanOrEqual(TOKENS_PER_WINDOW);
    }
  });

  it('fails a call estimated above the whole limit, naming it', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const result = await conversation.send('y'.repeat(2_000));
    expect(result.status).toBe('failed');
    expect(result.error).toContain('above its whole rateLimit.tokensPerMinute (300)');
  });
});
