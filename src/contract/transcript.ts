/**
 * How a conversation's transcript is kept: small messages inline, large ones in the payload store
 * with only their outline and a reference in the workflow. Pure code: the workflow uses it too.
 */

import { INLINE_MESSAGE_BYTES, MAX_CONTEXT_TAIL_BYTES, TRANSCRIPT_PAGE_BYTES } from './limits.ts';
import type { Message } from './types/messages.ts';
import { maxUtf8Bytes, utf8Bytes } from './utf8.ts';

/** Where a stored message lives: the payload store driver, its claim, and the message's size. */
export interface StoredContent {
  /** The name of the store driver that holds it (`file`, `s3`…). */
  driver: string;
  /** The driver's key to the payload (a path, a bucket and key…). */
  claim: Record<string, string>;
  /** The message's size in UTF-8 bytes of JSON, so a context window can be planned without reading it. */
  bytes: number;
}

/**
 * One entry of the transcript as the workflow keeps it: a message, or the outline of a stored one
 * (its role, ids and timestamp, with empty content) and `stored`. `Conversation.messages()` and model
 * calls resolve stored entries, so users and models always see whole messages.
 */
export type TranscriptEntry = Message & {
  /** Set when the message's content is in the payload store. */
  stored?: StoredContent;
};

/** One page of the transcript, from the `transcript` and `modelContext` queries. */
export interface TranscriptPage {
  /** The entries from the requested index on, at most a page's worth (always at least one). */
  messages: TranscriptEntry[];
  /** The transcript's length when the query ran. */
  total: number;
}

/** The transcript's entries from index `from` on, as a model call carries them (`CallModelInput.tail`). */
export interface TranscriptTail {
  from: number;
  entries: TranscriptEntry[];
}

/**
 * Where each turn began in the transcript: turn `firstTurn + i` began at message index `starts[i]`
 * (the turn's own messages follow). Turns before `firstTurn` ran on code that did not record this.
 */
export interface TurnStarts {
  firstTurn: number;
  starts: number[];
}

/** An entry's size, as JSON in UTF-8. */
export function entryBytes(entry: TranscriptEntry): number {
  return utf8Bytes(JSON.stringify(entry));
}

/** What the transcript keeps of `message` once its content is in the store. */
export function storedOutline<M extends Message>(
  message: M,
  stored: StoredContent,
): M & { stored: StoredContent } {
  const outline: TranscriptEntry =
    message.role === 'user'
      ? { role: 'user', content: '', timestamp: message.timestamp, stored }
      : message.role === 'assistant'
        ? { ...message, content: '', toolCalls: [], stored }
        : { ...message, content: [], details: {}, stored };
  return outline as M & { stored: StoredContent };
}

/** The entries from `from` on, stopping before `maxBytes` are exceeded (but with at least one). */
export function transcriptPage(
  entries: readonly TranscriptEntry[],
  from: number,
  maxBytes = TRANSCRIPT_PAGE_BYTES,
): TranscriptPage {
  const start = Math.max(0, Math.trunc(from) || 0);
  const page: TranscriptEntry[] = [];
  let bytes = 0;
  for (let index = start; index < entries.length; index++) {
    const entry = entries[index] as TranscriptEntry;
    bytes += entryBytes(entry);
    if (page.length > 0 && bytes > maxBytes) break;
    page.push(entry);
  }
  return { messages: page, total: entries.length };
}

/**
 * Indices of inline user messages over {@link INLINE_MESSAGE_BYTES}: they arrived by Update or
 * Signal, and the next model call stores them (workflow code cannot write to the store).
 */
export function largeInlineMessages(entries: readonly TranscriptEntry[]): number[] {
  const indices: number[] = [];
  entries.forEach((entry, index) => {
    // Texts whose bound is within the limit cannot be over it; only the others are encoded.
    if (entry.role !== 'user' || entry.stored || maxUtf8Bytes(entry.content) <= INLINE_MESSAGE_BYTES) return;
    if (entryBytes(entry) > INLINE_MESSAGE_BYTES) indices.push(index);
  });
  return indices;
}

/**
 * The entries from `from` on, when they add up to at most `maxBytes` as JSON; `undefined` when they
 * are larger (or there are none), so the model call reads them by query.
 */
export function transcriptTail(
  entries: readonly TranscriptEntry[],
  from: number,
  maxBytes = MAX_CONTEXT_TAIL_BYTES,
): TranscriptTail | undefined {
  if (from < 0 || from >= entries.length) return undefined;
  const tail = entries.slice(from);
  let bytes = 0;
  for (const entry of tail) {
    bytes += entryBytes(entry);
    if (bytes > maxBytes) return undefined;
  }
  return { from, entries: tail };
}
