/**
 * Evals from kept conversations: the one home of the rule that answers an eval conversation's tool
 * call from the kept conversation's calls, and of what an eval run's workflows take and return.
 */

import type { TextContent, ToolArguments } from './types/base.ts';
import type { ConversationOptions } from './types/conversation.ts';
import type { RecordedAnswerKind, RecordedTools } from './types/evals.ts';
import type { Spend } from './types/spend.ts';
import type { TurnResult } from './types/turns.ts';

/** The key of a tool result's `details` that says how an eval's conversation answered it. */
export const EVAL_ANSWER_DETAIL = 'yiemEval';

/** How one call of an eval's conversation is answered without running its tool. */
export interface RecordedAnswer {
  kind: RecordedAnswerKind;
  content: TextContent[];
  details: Record<string, unknown>;
  isError: boolean;
}

/** The text a call gets that matches no recorded call and has no stand-in. */
export function divergedText(toolName: string): string {
  return `Tool "${toolName}" was not run: this is an eval in recorded mode, and the kept conversation has no call of it with these arguments.`;
}

/** JSON with object keys sorted, so that two argument objects compare by value. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, each]) => each !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, each]) => `${JSON.stringify(key)}:${canonical(each)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Whether two calls' arguments are the same (by value, whatever the key order). */
export function sameArguments(a: ToolArguments, b: ToolArguments): boolean {
  return canonical(a) === canonical(b);
}

/**
 * The answer to a call of `toolName` with `args`: the first recorded call of that tool with the same
 * arguments not yet used (`used` counts the uses of each recorded call; a call repeated more often
 * than it was recorded gets the last matching result again), else the tool's stand-in, else diverged.
 */
export function recordedAnswer(
  recorded: RecordedTools,
  used: number[],
  toolName: string,
  args: ToolArguments,
): RecordedAnswer {
  const matching = recorded.calls.flatMap((call, index) =>
    call.toolName === toolName && sameArguments(call.args, args) ? [index] : [],
  );
  const index = matching.find((each) => (used[each] ?? 0) === 0) ?? matching.at(-1);
  const call = index === undefined ? undefined : recorded.calls[index];
  if (index !== undefined && call) {
    used[index] = (used[index] ?? 0) + 1;
    const details = { ...call.details, [EVAL_ANSWER_DETAIL]: 'recorded' };
    return { kind: 'recorded', content: call.content, details, isError: call.isError };
  }
  const standIn = recorded.standIns?.[toolName];
  if (standIn !== undefined) {
    const content = [{ type: 'text' as const, text: standIn }];
    return { kind: 'standIn', content, details: { [EVAL_ANSWER_DETAIL]: 'standIn' }, isError: false };
  }
  const content = [{ type: 'text' as const, text: divergedText(toolName) }];
  return { kind: 'diverged', content, details: { [EVAL_ANSWER_DETAIL]: 'diverged' }, isError: true };
}

/** Whether an eval's conversation answers a call from the record instead of running its tool. */
export function answersFromRecord(recorded: RecordedTools, atMostOnce: boolean): boolean {
  return recorded.mode !== 'live' || (atMostOnce && recorded.allowAtMostOnce !== true);
}

/** Why `value` cannot be a conversation's `recordedTools`, or `null`. */
export function recordedToolsProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'an object { mode?, calls, standIns?, allowAtMostOnce? }';
  const { mode, calls, standIns } = value as Record<string, unknown>;
  if (mode !== undefined && mode !== 'recorded' && mode !== 'live')
    return 'an object whose mode is "recorded" or "live"';
  const isCall = (call: unknown): boolean =>
    typeof call === 'object' &&
    call !== null &&
    typeof (call as Record<string, unknown>).toolName === 'string' &&
    Array.isArray((call as Record<string, unknown>).content);
  if (!Array.isArray(calls) || !calls.every(isCall))
    return 'an object whose calls are a list of { toolName, args, content, details, isError }';
  const isText = (text: unknown): boolean => typeof text === 'string';
  if (
    standIns !== undefined &&
    (typeof standIns !== 'object' || !Object.values(standIns ?? {}).every(isText))
  )
    return 'an object whose standIns map tool names to result texts';
  return null;
}

/** One kept conversation to replay: what the eval run's workflow takes for it. */
export interface EvalCaseInput {
  /** The kept conversation's id. */
  caseId: string;
  /** The replay's conversation id (derived from the run and the case, so a retry finds it). */
  conversationId: string;
  /** The candidate's task queue, where the replay runs. */
  taskQueue: string;
  /** The replay's options: the kept conversation's, the candidate's changes, `recordedTools`. */
  options: ConversationOptions;
  /** Each kept turn's user messages, in order. */
  turns: string[][];
}

/** One replayed turn, as the run's activity saw it; the client reads its messages from the transcript. */
export interface EvalTurnRun {
  /**
   * The turn's result; `null` for a turn a retried attempt found already answered in a conversation
   * that had ended (its transcript still has the turn).
   */
  result: TurnResult | null;
  /** Milliseconds from sending the turn's message to its result (`null` with no result). */
  latencyMs: number | null;
}

/** One replayed case. */
export interface EvalCaseRun {
  caseId: string;
  conversationId: string;
  turns: EvalTurnRun[];
  spend: Spend | null;
}

/** The activity an eval case runs on the candidate's worker. */
export interface EvalActivities {
  /**
   * Replays the case's turns into its conversation (started, or found after a retry: its messages
   * carry keys, so a turn already taken is not taken again), then ends it.
   */
  runEvalCase(input: EvalCaseInput): Promise<EvalCaseRun>;
}

/** The input of `evalRunWorkflow`. */
export interface EvalRunInput {
  cases: EvalCaseInput[];
  /** How many cases run at once. */
  concurrency: number;
}

/** How far an eval run has come (the `evalProgress` Query). */
export interface EvalProgress {
  total: number;
  finished: string[];
  running: string[];
}
