/**
 * Evals (layer 1): how a conversation replayed by an eval answers its tool calls
 * (`ConversationOptions.recordedTools`). See docs/evals.md.
 */

import type { TextContent, ToolArguments } from './base.ts';

/** One tool call of a kept conversation, with the result it got. */
export interface RecordedToolCall {
  /** The tool called. */
  toolName: string;
  /** Its arguments: a replayed call with the same ones (key order aside) gets this result. */
  args: ToolArguments;
  /** The result the model read. */
  content: TextContent[];
  /** The result's `details`. */
  details: Record<string, unknown>;
  /** Whether the result was an error. */
  isError: boolean;
}

/**
 * The tool results an eval's conversation answers from. In `'recorded'` mode (the default) no tool
 * runs: a call whose tool and arguments match a recorded call gets its result, any other call gets
 * its tool's stand-in or is marked diverged. In `'live'` mode tools run, except at-most-once tools,
 * which are answered as in recorded mode unless `allowAtMostOnce`.
 */
export interface RecordedTools {
  /** Whether tools run (`'live'`) or are answered from `calls`. Default `'recorded'`. */
  mode?: 'recorded' | 'live';
  /** The kept conversation's calls, with their results. */
  calls: RecordedToolCall[];
  /** A tool's result text for a call that matches no recorded call. */
  standIns?: Record<string, string>;
  /** In live mode, at-most-once tools run too. */
  allowAtMostOnce?: boolean;
}

/** How an eval's conversation answered a call without running it (`details.yiemEval` of its result). */
export type RecordedAnswerKind = 'recorded' | 'standIn' | 'diverged';
