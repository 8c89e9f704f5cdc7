import type { WorkflowHandle } from '@temporalio/client';
import type { KeptCompaction } from '../contract/compaction.ts';
import { transcriptQuery } from '../contract/definitions.ts';
import { withEntryMark } from '../contract/guardrails.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { TranscriptEntry } from '../contract/transcript.ts';
import type { Compaction } from '../contract/types/compaction.ts';
import type { Message } from '../contract/types/messages.ts';
import { ContentStore } from '../infrastructure/storage/contentStore.ts';

/** Which messages of a transcript to read, by index. */
export interface TranscriptRange {
  /** Default 0. */
  fromIndex?: number;
  /** Default: every message from `fromIndex` on. */
  limit?: number;
}

/** Stored messages fetched at once. */
const PARALLEL_READS = 8;

/** Reads a conversation's transcript page by page and resolves its stored messages. */
export async function readTranscript(handle: WorkflowHandle, range: TranscriptRange): Promise<Message[]> {
  const from = Math.max(0, range.fromIndex ?? 0);
  const entries = await readTranscriptEntries(handle, range);
  const store = ContentStore.of(handle.client.options.loadedDataConverter);
  const messages: Message[] = new Array(entries.length);
  for (let start = 0; start < entries.length; start += PARALLEL_READS) {
    const batch = entries.slice(start, start + PARALLEL_READS);
    const resolved = await Promise.all(
      batch.map((entry, offset) => resolveEntry(entry, store, handle.workflowId, from + start + offset)),
    );
    resolved.forEach((message, offset) => {
      messages[start + offset] = message;
    });
  }
  return messages;
}

/** The transcript's entries as the workflow keeps them: large messages as outlines with their reference. */
export async function readTranscriptEntries(
  handle: WorkflowHandle,
  range: TranscriptRange,
): Promise<TranscriptEntry[]> {
  const from = Math.max(0, range.fromIndex ?? 0);
  const end = range.limit === undefined ? Number.POSITIVE_INFINITY : from + Math.max(0, range.limit);
  const entries: TranscriptEntry[] = [];
  while (from + entries.length < end) {
    const index = from + entries.length;
    // The first page is asked without arguments: a query without payloads reads even from a worker
    // that lacks the key this client would encrypt them with (keys rotate readers first).
    const page = await (index === 0 ? handle.query(transcriptQuery) : handle.query(transcriptQuery, index));
    entries.push(...page.messages.slice(0, end - from - entries.length));
    if (page.messages.length === 0 || from + entries.length >= page.total) break;
  }
  return entries;
}

/** A transcript entry whole: a stored one fetched from the payload store. */
export async function resolveEntry(
  entry: TranscriptEntry,
  store: ContentStore | undefined,
  conversationId: string,
  index: number,
): Promise<Message> {
  const { stored, ...message } = entry;
  if (!stored) return message as Message;
  if (!store) {
    throw new Error(
      'This conversation keeps large messages in a payload store, and this client has none: give it the data converter of the workers (see docs/storage.md)',
    );
  }
  try {
    return withEntryMark(entry, await store.get<Message>(stored));
  } catch (error) {
    // Most often a client on another store than the workers that wrote the message.
    throw new Error(
      `Message ${index} of conversation ${conversationId} (${stored.bytes} bytes, in the payload store) cannot be read by this client: ${describeThrown(error)} Run \`yiem doctor\` with this client's settings to compare its payload store and codec keys with the workers'.`,
    );
  }
}

/** A compaction as a user reads it: with its summary whole, fetched from the payload store when large. */
export async function resolveCompaction(handle: WorkflowHandle, kept: KeptCompaction): Promise<Compaction> {
  const { stored, ...compaction } = kept;
  if (!stored) return compaction;
  const store = ContentStore.of(handle.client.options.loadedDataConverter);
  if (!store) {
    throw new Error(
      'This conversation keeps a large compaction summary in a payload store, and this client has none: give it the data converter of the workers (see docs/storage.md)',
    );
  }
  const message = await store.get<Message>(stored);
  return { ...compaction, summary: typeof message.content === 'string' ? message.content : '' };
}
