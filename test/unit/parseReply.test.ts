import type { ChatCompletion } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { parseArguments, parseAssistantMessage } from '../../activities/models/parseReply.ts';

/** A completion with one choice whose message is `message` (any shape, as providers send). */
function completion(
  message: Record<string, unknown>,
  extra: { finish_reason?: string | null; usage?: ChatCompletion['usage']; model?: string } = {},
): ChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: extra.model ?? 'provider-model',
    choices: [
      {
        index: 0,
        logprobs: null,
        finish_reason: extra.finish_reason === undefined ? 'stop' : extra.finish_reason,
        message: { role: 'assistant', refusal: null, content: null, ...message },
      },
    ],
    ...(extra.usage ? { usage: extra.usage } : {}),
  } as unknown as ChatCompletion;
}

describe('parseAssistantMessage', () => {
  it('reads OpenAI tool_calls with JSON-string arguments', () => {
    const reply = parseAssistantMessage(
      completion(
        {
          tool_calls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'getWeather', arguments: '{"city":"Tokyo","units":"celsius"}' },
            },
            {
              id: 'call_b',
              type: 'function',
              function: { name: 'getTime', arguments: '{"timezone":"UTC"}' },
            },
          ],
        },
        { finish_reason: 'tool_calls' },
      ),
      'gpt-test',
    );
    expect(reply.role).toBe('assistant');
    expect(reply.content).toBe('');
    expect(reply.toolCalls).toEqual([
      { type: 'function', id: 'call_a', name: 'getWeather', arguments: { city: 'Tokyo', units: 'celsius' } },
      { type: 'function', id: 'call_b', name: 'getTime', arguments: { timezone: 'UTC' } },
    ]);
    expect(reply.stopReason).toBe('toolCalls');
  });

  it('reads a single {type: "tool_call"} content block with object arguments', () => {
    const reply = parseAssistantMessage(
      completion({
        content: [{ type: 'tool_call', id: 'tc_1', name: 'getWeather', arguments: { city: 'Lima' } }],
      }),
      'm',
    );
    expect(reply.toolCalls).toEqual([
      { type: 'function', id: 'tc_1', name: 'getWeather', arguments: { city: 'Lima' } },
    ]);
    expect(reply.stopReason).toBe('toolCalls');
  });

  it('reads a {type: "tool_calls"} content block with nested function calls', () => {
    const reply = parseAssistantMessage(
      completion({
        content: [
          { type: 'text', text: 'Checking both.' },
          {
            type: 'tool_calls',
            tool_calls: [
              { id: 'x1', function: { name: 'getWeather', arguments: '{"city":"Rome"}' } },
              { id: 'x2', function: { name: 'getTime', arguments: { city: 'Rome' } } },
            ],
          },
        ],
      }),
      'm',
    );
    expect(reply.content).toBe('Checking both.');
    expect(reply.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, args }))).toEqual([
      { id: 'x1', name: 'getWeather', args: { city: 'Rome' } },
      { id: 'x2', name: 'getTime', args: { city: 'Rome' } },
    ]);
  });

  it('keeps tool_calls first and content-block calls after them', () => {
    const reply = parseAssistantMessage(
      completion({
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'one', arguments: '{}' } }],
        content: [{ type: 'tool_call', id: 'b', name: 'two', arguments: {} }],
      }),
      'm',
    );
    expect(reply.toolCalls.map((call) => call.id)).toEqual(['a', 'b']);
  });

  it('reads string content as the reply text', () => {
    const reply = parseAssistantMessage(completion({ content: 'Hello there.' }), 'm');
    expect(reply.content).toBe('Hello there.');
    expect(reply.toolCalls).toEqual([]);
    expect(reply.stopReason).toBe('stop');
  });

  it('joins text blocks and ignores blocks of other types', () => {
    const reply = parseAssistantMessage(
      completion({
        content: [
          { type: 'text', text: 'Hello, ' },
          { type: 'image_url', image_url: { url: 'x' } },
          { type: 'text', text: 'world.' },
          { type: 'text', text: 42 },
        ],
      }),
      'm',
    );
    expect(reply.content).toBe('Hello, world.');
  });

  it('gives empty content for null content', () => {
    expect(parseAssistantMessage(completion({ content: null }), 'm').content).toBe('');
  });

  it('turns malformed JSON arguments into {} and an argumentsError with the raw text', () => {
    const raw = '{"city": "Tokyo"';
    const reply = parseAssistantMessage(
      completion({
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'getWeather', arguments: raw } }],
      }),
      'm',
    );
    const [call] = reply.toolCalls;
    expect(call?.id).toBe('c');
    expect(call?.name).toBe('getWeather');
    expect(call?.arguments).toEqual({});
    expect(call?.argumentsError).toContain('not valid JSON');
    expect(call?.argumentsError).toContain('"getWeather"');
    expect(call?.argumentsError).toContain(raw);
  });

  it.each([
    ['an array', '[1,2]'],
    ['a string', '"x"'],
    ['a number', '7'],
    ['null', 'null'],
  ])('turns JSON that is %s into an argumentsError', (_label, raw) => {
    const reply = parseAssistantMessage(
      completion({ tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: raw } }] }),
      'm',
    );
    const [call] = reply.toolCalls;
    expect(call?.arguments).toEqual({});
    expect(call?.argumentsError).toContain('must be a JSON object');
    expect(call?.argumentsError).toContain(raw);
  });

  it('turns non-object block arguments into an argumentsError', () => {
    const reply = parseAssistantMessage(
      completion({ content: [{ type: 'tool_call', id: 'c', name: 'f', arguments: [1, 2] }] }),
      'm',
    );
    expect(reply.toolCalls[0]?.arguments).toEqual({});
    expect(reply.toolCalls[0]?.argumentsError).toContain('[1,2]');
  });

  it('generates a call_ id when the id is missing or empty, distinct per call', () => {
    const reply = parseAssistantMessage(
      completion({
        content: [
          { type: 'tool_call', name: 'f', arguments: {} },
          { type: 'tool_call', id: '', name: 'g', arguments: {} },
        ],
      }),
      'm',
    );
    const [first, second] = reply.toolCalls;
    expect(first?.id).toMatch(/^call_.+/);
    expect(second?.id).toMatch(/^call_.+/);
    expect(first?.id).not.toBe(second?.id);
  });

  it('treats empty and missing arguments as {} without an error', () => {
    const reply = parseAssistantMessage(
      completion({
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'listTools', arguments: '' } }],
        content: [
          { type: 'tool_call', id: 'b', name: 'listTools' },
          { type: 'tool_call', id: 'c', name: 'listTools', arguments: null },
        ],
      }),
      'm',
    );
    expect(reply.toolCalls).toHaveLength(3);
    for (const call of reply.toolCalls) {
      expect(call.arguments).toEqual({});
      expect(call).not.toHaveProperty('argumentsError');
    }
  });

  it('maps finish reasons', () => {
    expect(
      parseAssistantMessage(completion({ content: 'a' }, { finish_reason: 'stop' }), 'm').stopReason,
    ).toBe('stop');
    expect(
      parseAssistantMessage(completion({ content: 'a' }, { finish_reason: 'length' }), 'm').stopReason,
    ).toBe('length');
    expect(
      parseAssistantMessage(completion({ content: 'a' }, { finish_reason: 'content_filter' }), 'm')
        .stopReason,
    ).toBe('other');
    expect(parseAssistantMessage(completion({ content: 'a' }, { finish_reason: null }), 'm').stopReason).toBe(
      'other',
    );
  });

  it('reports toolCalls whenever there are tool calls, whatever the finish reason', () => {
    const reply = parseAssistantMessage(
      completion(
        { tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { finish_reason: 'stop' },
      ),
      'm',
    );
    expect(reply.stopReason).toBe('toolCalls');
  });

  it('maps usage to input/output/total tokens, and null when absent', () => {
    const withUsage = parseAssistantMessage(
      completion({ content: 'a' }, { usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }),
      'm',
    );
    expect(withUsage.usage).toEqual({ inputTokens: 11, outputTokens: 7, totalTokens: 18 });
    expect(parseAssistantMessage(completion({ content: 'a' }), 'm').usage).toBeNull();
  });

  it("uses the completion's model name, falling back to the requested one", () => {
    expect(
      parseAssistantMessage(completion({ content: 'a' }, { model: 'served-model' }), 'asked').model,
    ).toBe('served-model');
    expect(parseAssistantMessage(completion({ content: 'a' }, { model: '' }), 'asked').model).toBe('asked');
  });

  it('gives an empty, stop-less message for a completion without choices', () => {
    const empty = { ...completion({}), choices: [] } as ChatCompletion;
    const reply = parseAssistantMessage(empty, 'm');
    expect(reply.content).toBe('');
    expect(reply.toolCalls).toEqual([]);
    expect(reply.stopReason).toBe('other');
  });

  it('stamps the message with the current time', () => {
    const before = Date.now();
    const reply = parseAssistantMessage(completion({ content: 'a' }), 'm');
    expect(reply.timestamp).toBeGreaterThanOrEqual(before);
    expect(reply.timestamp).toBeLessThanOrEqual(Date.now());
  });
});

describe('parseArguments', () => {
  it('accepts an object as is', () => {
    const args = { a: 1, nested: { b: [1, 2] } };
    expect(parseArguments('f', args)).toEqual({ arguments: args });
  });

  it('reports a non-string, non-object value with its JSON', () => {
    const result = parseArguments('f', 5);
    expect(result.arguments).toEqual({});
    expect(result.argumentsError).toBe('Arguments for "f" must be a JSON object; received 5');
  });
});
