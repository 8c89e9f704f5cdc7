/**
 * Compaction (layer 3): how a conversation summarises its older turns, one compaction's record,
 * and a worker's own compaction function.
 */

import type { ActivityPolicy } from './base.ts';
import type { Message } from './messages.ts';

/** How a conversation compacts its context (`ConversationOptions.compaction`). */
export interface CompactionOptions {
  /**
   * The model that writes the summary: one the worker serves, by name, called at its endpoint with
   * its key and settings, and its fallbacks when it cannot answer. Default: the conversation's model.
   */
  model?: string;
  /** The system prompt of the summarising call. Default `DEFAULT_COMPACTION_PROMPT`. */
  prompt?: string;
  /** Turns (each from a user message on) kept whole after the summary. Default 4; fewer when they fill half the window. */
  keepRecentTurns?: number;
  /**
   * Compact when the context (summary and messages, bytes of JSON) would pass this. Default: the
   * window the worker reports for the model (`ModelSettings.maxContextBytes` and `maxContextTokens`).
   */
  maxContextBytes?: number;
  /** Timeouts and retries of the summarising call. Default: the conversation's `modelPolicy`. */
  policy?: ActivityPolicy;
}

/**
 * One compaction of a conversation's context (`Conversation.compactions()`): the summary that model
 * calls send instead of the transcript's messages before `upTo`.
 */
export interface Compaction {
  /** 1 for the conversation's first compaction, then counting up. */
  id: number;
  /** The turn it ran before (or, asked for between turns, the turn before it). */
  turn: number;
  /** `'window'`: the context would have passed the window; `'request'`: a client asked (`Conversation.compact()`). */
  trigger: 'window' | 'request';
  /** The transcript messages it summarised anew: indices `from` to `upTo - 1`, folded into the previous summary. */
  from: number;
  /** The summary stands for the messages before this index; model calls send the messages from it on. */
  upTo: number;
  /** The summary text. */
  summary: string;
  /** The model that wrote it, or `'custom'` for the worker's `compact` function. */
  model: string;
  /** When it was made, milliseconds since the epoch. */
  timestamp: number;
}

/** What a worker's custom compaction function (`AgentWorkerOptions.compaction.compact`) is given besides the messages. */
export interface CompactionContext {
  /** The conversation being compacted. */
  conversationId: string;
  /** The summary of the messages before these (fold them into it), or `undefined` for the first compaction. */
  previousSummary: string | undefined;
  /** The conversation's compaction prompt. */
  prompt: string;
  /** The model the conversation would summarise with. */
  model: string;
  /** Aborts when the workflow cancels the compaction. */
  signal: AbortSignal;
  /** The built-in summary (a model call with `prompt`), for functions that only pre- or post-process. */
  summarise(messages: Message[], previousSummary: string | undefined): Promise<string>;
}

/**
 * Writes a compaction's summary instead of the model: runs in the `compactContext` activity, so it
 * may do I/O. Its result replaces `previousSummary` (fold it in); a throw fails the attempt (retried).
 */
export type CompactionFunction = (
  messages: Message[],
  context: CompactionContext,
) => string | Promise<string>;
