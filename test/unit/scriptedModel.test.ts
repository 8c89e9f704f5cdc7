import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';

const MODEL = 'test-model';
const USER_MESSAGE = { role: 'user', content: 'hello' } as const;
const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
} as const;

let model: ScriptedModel;
let client: OpenAI;

beforeAll(async () => {
  model = await startScriptedModel();
  client = new OpenAI({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0 });
});

afterAll(async () => {
  await model.close();
});

beforeEach(() => {
  model.reset();
  model.respond(undefined);
});

/** Runs `call` and returns what it threw, failing the test if it did not throw. */
async function rejectionOf(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

function complete() {
  return client.chat.completions.create({ model: MODEL, messages: [USER_MESSAGE] });
}

describe('scripted model, non-streaming', () => {
  it('returns scripted text as a chat.completion', async () => {
    model.enqueue({ kind: 'text', text: 'Hi there!' });

    const completion = await complete();

    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-\d+$/);
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Hi there!' });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("reports a reply's scripted usage instead of an estimate", async () => {
    model.enqueue({ kind: 'text', text: 'Hi.', usage: { promptTokens: 2_000, completionTokens: 85_000 } });

    const completion = await complete();

    expect(completion.usage).toMatchObject({
      prompt_tokens: 2_000,
      completion_tokens: 85_000,
      total_tokens: 87_000,
    });
  });

  it('returns tool calls with ids, names and JSON arguments', async () => {
    model.enqueue({
      kind: 'toolCalls',
      text: 'Checking.',
      toolCalls: [
        { id: 'call_weather', name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_time', arguments: '{"zone":"CET"}' },
      ],
    });

    const completion = await complete();

    const message = completion.choices[0]?.message;
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(message?.content).toBe('Checking.');
    const [weather, time] = (message?.tool_calls ?? []).map((call) => {
      if (call.type !== 'function') throw new Error(`unexpected tool call type ${call.type}`);
      return call;
    });
    expect(weather?.id).toBe('call_weather');
    expect(weather?.function.name).toBe('get_weather');
    expect(JSON.parse(weather?.function.arguments ?? '')).toEqual({ city: 'Paris' });
    expect(time?.id).toMatch(/^call_\d+$/);
    expect(JSON.parse(time?.function.arguments ?? '')).toEqual({ zone: 'CET' });
  });

  it('delivers a malformed arguments string verbatim', async () => {
    model.enqueue({ kind: 'toolCalls', toolCalls: [{ name: 'get_weather', arguments: '{"city": "Par' }] });

    const completion = await complete();

    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.arguments).toBe('{"city": "Par');
    expect(completion.choices[0]?.message.content).toBeNull();
  });

  it('delivers content blocks verbatim', async () => {
    const blocks = [
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_call', id: 'tc_1', name: 'get_weather', arguments: { city: 'Oslo' } },
    ];
    model.enqueue({ kind: 'contentBlocks', blocks });

    const completion = await complete();

    expect(completion.choices[0]?.message.content as unknown).toEqual(blocks);
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
  });
});

describe('scripted model, streaming', () => {
  it('streams text as several deltas that concatenate to the text', async () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    model.enqueue({ kind: 'text', text });

    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [USER_MESSAGE],
      stream: true,
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    const pieces = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').filter((piece) => piece);
    expect(pieces.length).toBeGreaterThanOrEqual(4);
    expect(pieces.join('')).toBe(text);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === MODEL)).toBe(
      true,
    );
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('streams tool calls whose deltas reassemble into the calls', async () => {
    model.enqueue({
      kind: 'toolCalls',
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } },
        { id: 'call_b', name: 'get_weather', arguments: { city: 'Rome', unit: 'celsius' } },
      ],
    });

    const completion = await client.chat.completions
      .stream({ model: MODEL, messages: [USER_MESSAGE], tools: [WEATHER_TOOL] })
      .finalChatCompletion();

    const calls = completion.choices[0]?.message.tool_calls ?? [];
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(
      calls.map((call) =>
        call.type === 'function'
          ? { id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments) }
          : call,
      ),
    ).toEqual([
      { id: 'call_a', name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } },
      { id: 'call_b', name: 'get_weather', args: { city: 'Rome', unit: 'celsius' } },
    ]);
  });

  it('splits arguments across chunks and ends with usage when asked', async () => {
    model.enqueue({ kind: 'toolCalls', toolCalls: [{ name: 'get_weather', arguments: { city: 'Lisbon' } }] });

    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [USER_MESSAGE],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    const argumentPieces = chunks.flatMap(
      (chunk) => chunk.choices[0]?.delta.tool_calls?.map((call) => call.function?.arguments ?? '') ?? [],
    );
    expect(argumentPieces.filter((piece) => piece).length).toBeGreaterThan(1);
    expect(argumentPieces.join('')).toBe('{"city":"Lisbon"}');
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.total_tokens).toBeGreaterThan(0);
  });
});

describe('scripted model, failures', () => {
  it('surfaces a 429 as a RateLimitError with a readable retry-after header', async () => {
    model.enqueue({ kind: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '1' } });

    const error = await rejectionOf(complete);

    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(429);
    expect(apiError.message).toContain('slow down');
    expect(apiError.headers?.get('retry-after')).toBe('1');
  });

  it.each([
    [400, OpenAI.BadRequestError],
    [401, OpenAI.AuthenticationError],
    [500, OpenAI.InternalServerError],
  ])('surfaces a %i with its status', async (status, errorClass) => {
    model.enqueue({ kind: 'error', status });

    const error = await rejectionOf(complete);

    expect(error).toBeInstanceOf(errorClass);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(status);
  });

  it('surfaces a dropped connection as an APIConnectionError', async () => {
    model.enqueue({ kind: 'drop' });

    const error = await rejectionOf(complete);

    expect(error).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(error).not.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
  });

  it('surfaces a hang past the client timeout as an APIConnectionTimeoutError', async () => {
    model.enqueue({ kind: 'hang', ms: 5_000 });

    const error = await rejectionOf(() =>
      client.chat.completions.create({ model: MODEL, messages: [USER_MESSAGE] }, { timeout: 200 }),
    );

    expect(error).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
  });

  it('answers 500 saying the script ran out when nothing is scripted', async () => {
    const error = await rejectionOf(complete);

    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as Error).message).toContain('script ran out');
  });
});

describe('scripted model, recording and scripting', () => {
  it('records what the client sent', async () => {
    model.enqueue({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });

    await client.chat.completions.create({ model: MODEL, messages: [USER_MESSAGE], tools: [WEATHER_TOOL] });
    await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'again' }] });

    expect(model.requestCount).toBe(2);
    const [first, second] = model.requests;
    expect(first?.body.messages).toEqual([USER_MESSAGE]);
    expect(first?.body.tools).toEqual([WEATHER_TOOL]);
    expect(first?.body.model).toBe(MODEL);
    expect(first?.headers.authorization).toBe('Bearer test');
    expect(first?.headers['content-type']).toContain('application/json');
    expect(second?.receivedAt).toBeGreaterThanOrEqual(first?.receivedAt ?? Number.POSITIVE_INFINITY);
    expect(model.lastRequest()).toBe(second);
  });

  it('serves the queue first, then the respond handler', async () => {
    model.enqueue({ kind: 'text', text: 'queued' });
    model.respond((request, index) => ({
      kind: 'text',
      text: `handled #${index} for ${request.body.model}`,
    }));

    const first = await complete();
    const second = await complete();

    expect(first.choices[0]?.message.content).toBe('queued');
    expect(second.choices[0]?.message.content).toBe(`handled #1 for ${MODEL}`);
  });

  it('waits delayMs before answering', async () => {
    model.enqueue({ kind: 'text', text: 'late', delayMs: 150 });

    const started = Date.now();
    await complete();

    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('lists one model for clients that probe', async () => {
    const models = await client.models.list();

    expect(models.data.map((entry) => entry.id)).toEqual(['scripted-model']);
  });

  it('reset clears queued replies and recorded requests', async () => {
    model.enqueue({ kind: 'text', text: 'served' }, { kind: 'text', text: 'discarded' });
    await complete();

    model.reset();

    expect(model.requestCount).toBe(0);
    expect(model.lastRequest()).toBeUndefined();
    await expect(complete()).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  });
});
