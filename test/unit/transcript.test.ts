import { describe, expect, it } from 'vitest';
import { windowStart } from '../../activities/modelContext.ts';
import { INLINE_MESSAGE_BYTES } from '../../src/contract/limits.ts';
import {
  entryBytes,
  largeInlineMessages,
  storedOutline,
  type TranscriptEntry,
  transcriptPage,
  transcriptTail,
} from '../../src/contract/transcript.ts';
import type { AssistantMessage, ToolResultMessage } from '../../src/contract/types/messages.ts';

const user = (text: string): TranscriptEntry => ({ role: 'user', content: text, timestamp: 1 });
const reply = (text: string): AssistantMessage => ({
  role: 'assistant',
  content: text,
  toolCalls: [],
  model: 'm',
  usage: null,
  stopReason: 'stop',
  timestamp: 2,
});
const toolResult = (text: string): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: 'c1',
  toolName: 'read',
  content: [{ type: 'text', text }],
  details: { big: text },
  isError: false,
  timestamp: 3,
});
const stored = { driver: 'yiem-files', claim: { sha256: 'f'.repeat(64) }, bytes: 1_000_000 };

describe('storedOutline', () => {
  it('keeps ids and timestamps and drops the content', () => {
    expect(storedOutline(toolResult('x'.repeat(10_000)), stored)).toEqual({
      role: 'toolResult',
      toolCallId: 'c1',
      toolName: 'read',
      content: [],
      details: {},
      isError: false,
      timestamp: 3,
      stored,
    });
    expect(entryBytes(storedOutline(user('y'.repeat(100_000)), stored))).toBeLessThan(300);
  });
});

describe('transcriptPage', () => {
  it('pages by bytes, always with at least one entry', () => {
    const entries = [user('a'.repeat(400)), user('b'.repeat(400)), user('c'.repeat(2000)), user('d')];
    expect(transcriptPage(entries, 0, 1000).messages).toHaveLength(2);
    expect(transcriptPage(entries, 2, 1000).messages).toEqual([entries[2]]);
    expect(transcriptPage(entries, 3, 1000)).toEqual({ messages: [entries[3]], total: 4 });
    expect(transcriptPage(entries, 4, 1000)).toEqual({ messages: [], total: 4 });
  });
});

describe('transcriptTail', () => {
  it('carries the entries since an index when they are small, and none when they are not', () => {
    const entries = [user('a'.repeat(400)), reply('b'.repeat(400)), user('c'.repeat(100))];
    expect(transcriptTail(entries, 1, 1000)).toEqual({ from: 1, entries: entries.slice(1) });
    expect(transcriptTail(entries, 0, 1000)).toBeUndefined();
    expect(transcriptTail(entries, 3, 1000)).toBeUndefined();
  });
});

describe('largeInlineMessages', () => {
  it('finds the user messages the workflow may not keep inline', () => {
    const entries = [
      user('small'),
      user('x'.repeat(INLINE_MESSAGE_BYTES + 1)),
      reply('r'.repeat(INLINE_MESSAGE_BYTES + 1)),
      storedOutline(user('y'.repeat(INLINE_MESSAGE_BYTES * 2)), stored),
    ];
    expect(largeInlineMessages(entries)).toEqual([1]);
  });
});

describe('windowStart (the model context window)', () => {
  it('sends everything that fits', () => {
    expect(windowStart([user('a'), reply('b'), user('c'), reply('d')], 10_000)).toBe(0);
  });

  it('starts at a user message, leaving out the oldest turns beyond the window', () => {
    const entries = [user('a'.repeat(3000)), reply('b'), user('c'.repeat(3000)), reply('d'), user('e')];
    expect(windowStart(entries, 4000)).toBe(2);
  });

  it('always sends the current turn whole, with a tool result larger than the window', () => {
    const entries: TranscriptEntry[] = [
      user('a'),
      reply('b'),
      user('read it'),
      { ...reply(''), toolCalls: [{ type: 'function', id: 'c1', name: 'read', arguments: {} }] },
      storedOutline(toolResult('z'), stored),
    ];
    expect(windowStart(entries, 100_000)).toBe(2);
  });
});
