import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_COMPACTION_PROMPT } from '../../src/contract/compaction.ts';
import type { Guardrail } from '../../src/contract/types/guardrails.ts';
import {
  type RecordedRequest,
  type ReplyHandler,
  type ScriptedModel,
  startScriptedModel,
} from '../../src/testing/index.ts';
import { FAST_MODEL_RETRY, startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { closedPort } from '../support/ports.ts';

const JUDGE_PROMPT = 'Answer SAFE or UNSAFE.';

/** A guardrail that asks the worker's `strong` model, or the model `unknownModel` names, to judge. */
const judge: Guardrail = {
  name: 'judge',
  execute: async (text, context) => {
    const answer = await context.complete({ instructions: JUDGE_PROMPT, input: text, model: 'strong' });
    return answer === 'SAFE' ? { action: 'pass' } : { action: 'trip', reason: `the judge said ${answer}` };
  },
};
const unknownModel: Guardrail = {
  name: 'unknownModel',
  execute: async (text, context) => {
    await context.complete({ instructions: JUDGE_PROMPT, input: text, model: 'gpt-9' });
    return { action: 'pass' };
  },
};

function systemOf(request: RecordedRequest): unknown {
  return request.body.messages[0]?.content;
}

/** A model server that answers summaries, judgements and turns, each with its own name in it. */
function answers(name: string): ReplyHandler {
  return (request) => {
    const system = systemOf(request);
    if (system === DEFAULT_COMPACTION_PROMPT) return { kind: 'text', text: `${name} summary` };
    if (system === JUDGE_PROMPT) return { kind: 'text', text: 'SAFE' };
    return { kind: 'text', text: `${name} answer` };
  };
}

describe("a compaction's and a guardrail's model calls go through the worker's models", () => {
  let fast: ScriptedModel;
  let strong: ScriptedModel;
  let agent: TestAgent;
  beforeAll(async () => {
    fast = await startScriptedModel({ respond: answers('fast') });
    strong = await startScriptedModel({ respond: answers('strong') });
    const port = await closedPort();
    agent = await startTestAgent({
      worker: {
        models: {
          model: undefined,
          models: {
            fast: { baseURL: fast.baseURL, apiKey: 'fast-key' },
            strong: { baseURL: strong.baseURL, apiKey: 'strong-key', model: 'provider-strong' },
            down: { baseURL: `http://127.0.0.1:${port}/v1`, timeoutMs: 2_000 },
          },
          defaultModel: 'fast',
          fallbacks: { down: ['strong'] },
        },
        hooks: { guardrails: { input: [judge, unknownModel] } },
      },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await fast?.close();
    await strong?.close();
  });

  const summaryRequests = (model: ScriptedModel) =>
    model.requests.filter((request) => systemOf(request) === DEFAULT_COMPACTION_PROMPT);

  it("sends the summary to the model the compaction names, with that model's endpoint and key", async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      compaction: { keepRecentTurns: 1, model: 'strong' },
    });
    await conversation.send('q1');
    expect(await conversation.send('q2')).toMatchObject({ reply: 'fast answer' });
    expect(await conversation.compact()).toMatchObject({ summary: 'strong summary', model: 'strong' });
    const [summarised] = summaryRequests(strong);
    expect(summarised?.body.model).toBe('provider-strong');
    expect(summarised?.headers.authorization).toBe('Bearer strong-key');
    expect(summaryRequests(fast)).toEqual([]);
    await conversation.end();
  });

  it("falls back when the compaction's model cannot be reached", async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      compaction: { keepRecentTurns: 1, model: 'down' },
      modelPolicy: FAST_MODEL_RETRY,
    });
    await conversation.send('q1');
    await conversation.send('q2');
    expect(await conversation.compact()).toMatchObject({ summary: 'strong summary', model: 'strong' });
    await conversation.end();
  });

  it("sends a guardrail's complete({ model: 'strong' }) to that model's server", async () => {
    strong.reset();
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      guardrails: { input: ['judge'] },
    });
    expect(await conversation.send('is this fine?')).toMatchObject({
      status: 'completed',
      reply: 'fast answer',
    });
    expect(strong.requests.map((request) => request.body.messages.at(-1)?.content)).toEqual([
      'is this fine?',
    ]);
    await conversation.end();
  });

  it('fails the turn naming the models the worker serves when a guardrail asks for another', async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      guardrails: { input: ['unknownModel'] },
      modelPolicy: FAST_MODEL_RETRY,
    });
    const result = await conversation.send('hello');
    expect(result).toMatchObject({ status: 'failed' });
    expect(result.error).toContain(
      `asks for model "gpt-9", which this worker does not serve (its models: fast, strong, down)`,
    );
    await conversation.end();
  });
});
