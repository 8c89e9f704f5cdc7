import { describe, expect, it } from 'vitest';
import { finishedLength, transcriptUiMessages } from '../../src/client/consoleTranscript.ts';
import { textContent } from '../../src/contract/toolResult.ts';
import type { AssistantMessage, Message, ToolResultMessage } from '../../src/contract/types/messages.ts';

const user = (content: string): Message => ({ role: 'user', content, timestamp: 0 });
const reply = (
  content: string,
  calls: { id: string; name: string; args?: Record<string, unknown> }[] = [],
): AssistantMessage => ({
  role: 'assistant',
  content,
  toolCalls: calls.map((call) => ({
    type: 'function',
    id: call.id,
    name: call.name,
    arguments: call.args ?? {},
  })),
  model: 'scripted',
  usage: null,
  stopReason: calls.length > 0 ? 'toolCalls' : 'stop',
  timestamp: 0,
});
const result = (toolCallId: string, toolName: string, text: string, isError = false): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName,
  content: [textContent(text)],
  details: {},
  isError,
  timestamp: 0,
});

describe("the console's transcript as useChat messages", () => {
  const transcript: Message[] = [
    user('weather in Tokyo and Paris?'),
    reply('Checking.', [
      { id: 'c1', name: 'lookup', args: { city: 'Tokyo' } },
      { id: 'c1', name: 'lookup', args: { city: 'Paris' } },
    ]),
    result('c1', 'lookup', 'Tokyo: sunny'),
    result('c1', 'lookup', 'no such city', true),
    reply('Tokyo is sunny.'),
    user('thanks'),
    reply('You are welcome.'),
  ];

  it('makes each turn one assistant message named after it, with repeated call ids made unique as the stream does', () => {
    const messages = transcriptUiMessages('conv', transcript, { firstTurn: 1, starts: [0, 5] });
    expect(messages.map((message) => [message.id, message.role])).toEqual([
      ['conv-message-0', 'user'],
      ['conv-turn-1', 'assistant'],
      ['conv-message-5', 'user'],
      ['conv-turn-2', 'assistant'],
    ]);
    expect(messages[1]?.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Checking.', state: 'done' },
      {
        type: 'tool-lookup',
        toolCallId: 'c1',
        state: 'output-available',
        input: { city: 'Tokyo' },
        output: { text: 'Tokyo: sunny' },
      },
      {
        type: 'tool-lookup',
        toolCallId: 'c1-2',
        state: 'output-error',
        input: { city: 'Paris' },
        errorText: 'no such city',
      },
      { type: 'step-start' },
      { type: 'text', text: 'Tokyo is sunny.', state: 'done' },
    ]);
  });

  it('stops a running turn after the user messages it began with, since its replay rebuilds the rest', () => {
    expect(finishedLength(transcript, 0, 5)).toBe(6);
    // Without recorded turn starts, the running turn is taken to begin at the last user message.
    expect(finishedLength(transcript, 0, undefined)).toBe(6);
    expect(finishedLength(transcript.slice(0, 3), 0, undefined)).toBe(1);
  });
});
