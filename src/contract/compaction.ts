/**
 * Compaction: when a conversation's context would pass the model's window, its older turns are
 * summarised (the `compactContext` activity) and model calls send the summary and the recent turns.
 * The rules the workflow and the activities share live here. Pure code: the workflow uses it too.
 */
import { entryBytes, type StoredContent, type TranscriptEntry } from './transcript.ts';
import type { Compaction } from './types/compaction.ts';
import { utf8Bytes } from './utf8.ts';

/** The system prompt of a compaction's model call when the conversation gives none. */
export const DEFAULT_COMPACTION_PROMPT =
  'You summarise a conversation between a user and an AI assistant so that the assistant can carry on without the full transcript. ' +
  'Keep every fact, decision, open question, name, number and file path the assistant may need later, and what the user asked for; ' +
  'drop pleasantries and repetition. When an earlier summary is given, fold the new messages into it. Answer with the summary only.';

/** Turns (from a user message on) a compaction leaves out of the summary when the conversation sets none. */
export const DEFAULT_KEEP_RECENT_TURNS = 4;

/**
 * The recent turns a compaction keeps may fill at most this share of the window: the rest is room for
 * the summary and for the turns to come, so that the next compaction is not due at once.
 */
export const RECENT_SHARE_OF_WINDOW = 0.5;

/** A compaction's summary, as the workflow keeps it: inline, or (when large) in the payload store. */
export interface CompactionSummary {
  /** The summary text; empty when it is `stored`. */
  summary: string;
  /** Where a large summary lives: the workflow keeps only this reference. */
  stored?: StoredContent;
}

/** A compaction as the workflow keeps it (the `compactions` query): its summary inline or stored. */
export type KeptCompaction = Omit<Compaction, 'summary'> & CompactionSummary;

/** The bytes a summary adds to a model call's context. */
export function summaryBytes(summary: CompactionSummary | undefined): number {
  if (!summary) return 0;
  return summary.stored?.bytes ?? utf8Bytes(summary.summary);
}

/**
 * Each entry's size, measured once: a turn asks before every model call for the entries since the
 * last compaction, and entries are never changed in place (an entry that goes to the store is
 * replaced by its outline, a new object).
 */
const measuredBytes = new WeakMap<TranscriptEntry, number>();

/** The size of one entry in a context window: a stored one counts whole, as the model receives it. */
export function contextEntryBytes(entry: TranscriptEntry): number {
  if (entry.stored?.bytes !== undefined) return entry.stored.bytes;
  let bytes = measuredBytes.get(entry);
  if (bytes === undefined) {
    bytes = entryBytes(entry);
    measuredBytes.set(entry, bytes);
  }
  return bytes;
}

/** The bytes of the entries from `from` on: what a model call sends next to the summary. */
export function contextBytes(entries: readonly TranscriptEntry[], from: number): number {
  let bytes = 0;
  for (let index = from; index < entries.length; index++) {
    bytes += contextEntryBytes(entries[index] as TranscriptEntry);
  }
  return bytes;
}

/**
 * Where the recent turns a compaction keeps begin: at a user message after `from` (so no tool result
 * loses its call), keeping the latest `keepRecentTurns` turns unless they would fill more than
 * `maxRecentBytes`; the latest turn is always kept. `from` or less: there is nothing older to summarise.
 */
export function compactionBoundary(
  entries: readonly TranscriptEntry[],
  from: number,
  keepRecentTurns: number,
  maxRecentBytes: number,
): number {
  let bytes = 0;
  let turns = 0;
  let boundary = from;
  for (let index = entries.length - 1; index >= from; index--) {
    const entry = entries[index] as TranscriptEntry;
    bytes += contextEntryBytes(entry);
    if (entry.role !== 'user') continue;
    if (turns > 0 && (turns >= keepRecentTurns || bytes > maxRecentBytes)) return boundary;
    turns += 1;
    boundary = index;
  }
  return from;
}

/** What a model call's system prompt gains from a compaction: the summary of the messages before `upTo`. */
export function summaryPreamble(summary: string, upTo: number): string {
  return `[The ${upTo} earliest messages of this conversation are summarised here instead of shown; the transcript keeps them whole.]\n<summary>\n${summary}\n</summary>`;
}
