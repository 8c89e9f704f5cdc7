import { describe, expect, it } from 'vitest';
import { formatMessages, formatTools } from '../../activities/models/formatMessages.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type {
  AssistantMessage,
  Message,
  ToolResultMessage,
  UserMessage,
} from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';

const user = (content: string): UserMessage => ({ role: 'user', content, timestamp: 1 });

function assistant(content: string, toolCalls: AssistantMessage['toolCalls'] = []): AssistantMessage {
  return {
    role: 'assistant',
    content,
    toolCalls,
    model: 'm',
    usage: null,
    stopReason: toolCalls.length > 0 ? 'toolCalls' : 'stop',
    timestamp: 2,
  };
}

function toolResult(toolCallId: string, texts: string[], isError = false): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId,
    toolName: 'getWeather',
    content: texts.map((text) => ({ type: 'text', text })),
    details: { secret: 'for the UI only' },
    isError,
    timestamp: 3,
  };
}

describe('formatMessages', () => {
  it('leaves out the user messages and replies a guardrail tripped on or could not check, never a tool result', () => {
    const tripped = { tripped: { guardrail: 'g', reason: 'r' } };
    const messages: Message[] = [
      { ...user('a secret'), guardrail: tripped },
      { ...user('not checked'), guardrail: { failed: 'the turn was cancelled first' } },
      { ...user('hi [removed]'), guardrail: { rewrittenBy: ['g'], original: 'hi you' } },
      { ...assistant('the INTERNAL plan'), guardrail: tripped },
      assistant('', [{ type: 'function', id: 'c1', name: 'getWeather', arguments: {} }]),
      { ...toolResult('c1', ['The result of getWeather was withheld']), guardrail: tripped },
    ];
    expect(formatMessages('', messages).map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
    ]);
    expect(formatMessages('', messages)[0]).toEqual({ role: 'user', content: 'hi [removed]' });
  });

  it('puts the system prompt first', () => {
    const formatted = formatMessages('You are helpful.', [user('Hi')]);
    expect(formatted).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('omits an empty system prompt', () => {
    expect(formatMessages('', [user('Hi')])).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(formatMessages('', [])).toEqual([]);
  });

  it('formats a whole tool-using exchange in Chat Completions shape, in order', () => {
    const messages: Message[] = [
      user('Weather in Tokyo?'),
      assistant('', [
        {
          type: 'function',
          id: 'call_1',
          name: 'getWeather',
          arguments: { city: 'Tokyo', units: 'celsius' },
        },
      ]),
      toolResult('call_1', ['Sunny', '22°C']),
      assistant('It is sunny and 22°C.'),
    ];
    expect(formatMessages('sys', messages)).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'Weather in Tokyo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'getWeather', arguments: '{"city":"Tokyo","units":"celsius"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Sunny\n22°C' },
      { role: 'assistant', content: 'It is sunny and 22°C.' },
    ]);
  });

  it('keeps the text of an assistant message that also calls tools', () => {
    const [formatted] = formatMessages('', [
      assistant('Let me check.', [
        { type: 'function', id: 'a', name: 'f', arguments: {} },
        { type: 'function', id: 'b', name: 'g', arguments: { n: [1, 2] } },
      ]),
    ]);
    expect(formatted).toEqual({
      role: 'assistant',
      content: 'Let me check.',
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'b', type: 'function', function: { name: 'g', arguments: '{"n":[1,2]}' } },
      ],
    });
  });

  it('sends an assistant message without tool calls as plain content, even when empty', () => {
    const [formatted] = formatMessages('', [assistant('')]);
    expect(formatted).toEqual({ role: 'assistant', content: '' });
    expect(formatted).not.toHaveProperty('tool_calls');
  });

  it('sends only the text of a tool result, never its details or error flag', () => {
    const [formatted] = formatMessages('', [toolResult('call_9', ['Error: city not found'], true)]);
    expect(formatted).toEqual({ role: 'tool', tool_call_id: 'call_9', content: 'Error: city not found' });
  });

  it('sends an empty string for a tool result without content blocks', () => {
    const [formatted] = formatMessages('', [toolResult('call_0', [])]);
    expect(formatted).toEqual({ role: 'tool', tool_call_id: 'call_0', content: '' });
  });

  it('does not include timestamps or other transcript-only fields', () => {
    for (const formatted of formatMessages('', [user('a'), assistant('b'), toolResult('c', ['d'])])) {
      expect(formatted).not.toHaveProperty('timestamp');
      expect(formatted).not.toHaveProperty('model');
      expect(formatted).not.toHaveProperty('usage');
    }
  });
});

describe('formatTools', () => {
  const tool: AgentTool = {
    name: 'getWeather',
    label: 'Weather Lookup',
    description: 'Current weather for a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    execute: () => textResult('sunny'),
    parallelToolExecute: true,
  };

  it('describes each tool as a function with its name, description and schema', () => {
    expect(formatTools([tool])).toEqual([
      {
        type: 'function',
        function: {
          name: 'getWeather',
          description: 'Current weather for a city.',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ]);
  });

  it('keeps the order of the tools and leaves out the label', () => {
    const formatted = formatTools([tool, { ...tool, name: 'getTime', description: 'Time.' }]);
    expect(formatted.map((entry) => (entry.type === 'function' ? entry.function.name : ''))).toEqual([
      'getWeather',
      'getTime',
    ]);
    expect(JSON.stringify(formatted)).not.toContain('Weather Lookup');
  });

  it('returns no tools for an empty list', () => {
    expect(formatTools([])).toEqual([]);
  });
});
