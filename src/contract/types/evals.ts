/**
 * Evals (layer 1): how a conversation replayed by an eval answers its tool calls
 * (`ConversationOptions.recordedTools`). See docs/evals.md.
 */

import type { TextContent, ToolArguments } from './base.ts';

/** One tool call of a kept conversation, with the result it got. */
export interface RecordedToolCall {
  toolName: string;
  args: ToolArguments;
  content: TextContent[];
  details: Record<string, unknown>;
  isError: boolean;
}

/**
 * The tool results an eval's conversation answers from. In `'recorded'` mode (the default) no tool
 * runs: a call whose tool and arguments match a recorded call gets its result, any other call gets
 * its tool's stand-in or is marked diverged. In `'live'` mode tools run, except at-most-once tools,
 * which are answered as in recorded mode unless `allowAtMostOnce`.
 */
export interface RecordedTools {
  mode?: 'recorded' | 'live';
  calls: RecordedToolCall[];
  /** A tool's result text for a call that matches no recorded call. */
  standIns?: Record<string, string>;
  /** In live mode, at-most-once tools run too. */
  allowAtMostOnce?: boolean;
}

/** How an eval's conversation answered a call without running it (`details.yiemEval` of its result). */
export type RecordedAnswerKind = 'recorded' | 'standIn' | 'diverged';
