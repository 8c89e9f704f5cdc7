import OpenAI from 'openai';
import { sameArguments } from '../../contract/evals.ts';
import type { ToolArguments } from '../../contract/types/base.ts';
import type { EvalTurn } from './keptCases.ts';

/** A tool call an expectation looks for: by name, and by arguments when given. */
export interface ExpectedToolCall {
  /** The tool's name. */
  tool: string;
  /** The call's arguments (compared by value); absent: any arguments. */
  args?: ToolArguments;
}

/** What a replayed case is expected to do. Every field given must hold for the case to pass. */
export interface EvalExpectation {
  /** The last turn's reply contains this text. */
  replyContains?: string;
  /** The last turn's reply matches this regular expression. */
  replyMatches?: string;
  /** Each of these calls was made in some turn. */
  toolCalled?: ExpectedToolCall[];
  /** None of these calls was made. */
  toolNotCalled?: ExpectedToolCall[];
  /** At most this many turns. */
  maxTurns?: number;
  /** At most this many tokens, input and output, over the case. */
  maxTokens?: number;
  /** At most this cost over the case (the workers' price table). */
  maxCost?: number;
  /** At most this many Temporal Cloud Actions over the case's turns (their results' `spend.actions`). */
  maxActions?: number;
  /** The judge's rubric for this case (the judge must be given). */
  rubric?: string;
}

/** Expectations from a file: `all` apply to every case, `cases` to one case each (by kept id). */
export interface EvalExpectations {
  /** What every case is expected to do. */
  all?: EvalExpectation;
  /** What one case is expected to do, by the kept conversation's id, over `all`. */
  cases?: Record<string, EvalExpectation>;
}

/** A model that judges a replay against a rubric: any OpenAI-compatible endpoint. */
export interface EvalJudge {
  /** The endpoint, e.g. `https://api.openai.com/v1`. */
  baseURL: string;
  /** Its API key, if it needs one. */
  apiKey?: string;
  /** The judge's model. */
  model: string;
  /** The rubric of cases that name none. */
  rubric?: string;
}

/** What the judge said of one case. */
export interface JudgeVerdict {
  /** Whether the replay meets the rubric. */
  pass: boolean;
  /** Why, in the judge's words. */
  reason: string;
}

function called(turns: readonly EvalTurn[], expected: ExpectedToolCall): boolean {
  return turns.some((turn) =>
    turn.toolCalls.some(
      (call) =>
        call.toolName === expected.tool &&
        (expected.args === undefined || sameArguments(call.args, expected.args)),
    ),
  );
}

function shownCall(expected: ExpectedToolCall): string {
  return expected.args === undefined ? expected.tool : `${expected.tool}(${JSON.stringify(expected.args)})`;
}

/** The expectations a replay fails, each in a sentence; none: it passes them. */
export function failedExpectations(turns: readonly EvalTurn[], expectation: EvalExpectation): string[] {
  const failures: string[] = [];
  const reply = turns.at(-1)?.reply ?? '';
  const { replyContains, replyMatches, maxTurns, maxTokens, maxCost, maxActions } = expectation;
  if (replyContains !== undefined && !reply.includes(replyContains))
    failures.push(`the reply does not contain ${JSON.stringify(replyContains)}`);
  if (replyMatches !== undefined && !new RegExp(replyMatches).test(reply))
    failures.push(`the reply does not match /${replyMatches}/`);
  for (const expected of expectation.toolCalled ?? [])
    if (!called(turns, expected)) failures.push(`${shownCall(expected)} was not called`);
  for (const expected of expectation.toolNotCalled ?? [])
    if (called(turns, expected)) failures.push(`${shownCall(expected)} was called`);
  if (maxTurns !== undefined && turns.length > maxTurns)
    failures.push(`${turns.length} turns, more than ${maxTurns}`);
  const tokens = turns.reduce((sum, turn) => sum + turn.inputTokens + turn.outputTokens, 0);
  if (maxTokens !== undefined && tokens > maxTokens)
    failures.push(`${tokens} tokens, more than ${maxTokens}`);
  const cost = turns.reduce((sum, turn) => sum + turn.cost, 0);
  if (maxCost !== undefined && cost > maxCost) failures.push(`cost ${cost}, more than ${maxCost}`);
  const actions = turns.reduce((sum, turn) => sum + turn.actions, 0);
  if (maxActions !== undefined && actions > maxActions)
    failures.push(`${actions} Actions, more than ${maxActions}`);
  return failures;
}

/** A case's expectation: the ones for all cases, with the case's own over them. */
export function expectationOf(expectations: EvalExpectations | undefined, caseId: string): EvalExpectation {
  return { ...expectations?.all, ...expectations?.cases?.[caseId] };
}

const JUDGE_INSTRUCTIONS =
  'You judge an AI agent\'s conversation against a rubric. Answer with one JSON object and nothing else: {"pass": true or false, "reason": "one sentence"}.';

/** The conversation as the judge reads it. */
function judgedText(turns: readonly EvalTurn[]): string {
  return turns
    .map((turn, index) => {
      const calls = turn.toolCalls.map(
        (call) => `  tool ${call.toolName}(${JSON.stringify(call.args)}) → ${call.result}`,
      );
      return [
        `Turn ${index + 1}`,
        ...turn.user.map((text) => `  user: ${text}`),
        ...calls,
        `  agent: ${turn.reply}`,
      ].join('\n');
    })
    .join('\n');
}

/** Asks the judge model whether the replay meets the rubric. */
export async function judge(
  judgeModel: EvalJudge,
  rubric: string,
  turns: readonly EvalTurn[],
): Promise<JudgeVerdict> {
  const client = new OpenAI({ baseURL: judgeModel.baseURL, apiKey: judgeModel.apiKey ?? 'none' });
  const reply = await client.chat.completions.create({
    model: judgeModel.model,
    messages: [
      { role: 'system', content: JUDGE_INSTRUCTIONS },
      { role: 'user', content: `Rubric: ${rubric}\n\nConversation:\n${judgedText(turns)}` },
    ],
  });
  const text = reply.choices[0]?.message.content ?? '';
  try {
    const verdict = JSON.parse(
      text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1),
    ) as Partial<JudgeVerdict>;
    return { pass: verdict.pass === true, reason: String(verdict.reason ?? '') };
  } catch {
    return { pass: false, reason: `the judge did not answer in JSON: ${text}` };
  }
}
