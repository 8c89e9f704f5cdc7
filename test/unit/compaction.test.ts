import { describe, expect, it } from 'vitest';
import { compactionBoundary, contextBytes } from '../../src/contract/compaction.ts';
import type { TranscriptEntry } from '../../src/contract/transcript.ts';
import type { AssistantMessage } from '../../src/contract/types/messages.ts';

const user = (content: string): TranscriptEntry => ({ role: 'user', content, timestamp: 0 });
const reply = (content: string, toolCalls: AssistantMessage['toolCalls'] = []): AssistantMessage => ({
  role: 'assistant',
  content,
  toolCalls,
  model: 'm',
  usage: null,
  stopReason: 'stop',
  timestamp: 0,
});
/** `turns` turns of a question and its answer: user messages at 0, 2, 4... */
const conversation = (turns: number): TranscriptEntry[] =>
  Array.from({ length: turns }, (_, index) => [user(`q${index}`), reply(`a${index}`)]).flat();

describe('compactionBoundary', () => {
  it('keeps the latest turns whole and summarises the ones before, from the last compaction on', () => {
    expect(compactionBoundary(conversation(6), 0, 2, Number.POSITIVE_INFINITY)).toBe(8);
    expect(compactionBoundary(conversation(6), 4, 2, Number.POSITIVE_INFINITY)).toBe(8);
  });

  it('has nothing to summarise while no more turns than it keeps follow the last compaction', () => {
    expect(compactionBoundary(conversation(2), 0, 2, Number.POSITIVE_INFINITY)).toBe(0);
    expect(compactionBoundary(conversation(6), 8, 2, Number.POSITIVE_INFINITY)).toBe(8);
  });

  it('keeps fewer turns when they would fill more than their share, but always the latest', () => {
    const entries = conversation(6);
    const lastTurn = contextBytes(entries, 10);
    expect(compactionBoundary(entries, 0, 4, lastTurn + 1)).toBe(10);
    expect(compactionBoundary(entries, 0, 4, 1)).toBe(10);
  });

  it('never starts the kept part at a tool result: only at a user message', () => {
    const entries: TranscriptEntry[] = [
      ...conversation(3),
      user('q3'),
      reply('', [{ type: 'function', id: 'c', name: 'look', arguments: {} }]),
      {
        role: 'toolResult',
        toolCallId: 'c',
        toolName: 'look',
        content: [{ type: 'text', text: 'seen' }],
        details: {},
        isError: false,
        timestamp: 0,
      },
    ];
    expect(compactionBoundary(entries, 0, 1, Number.POSITIVE_INFINITY)).toBe(6);
  });
});
