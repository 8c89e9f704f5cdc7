import type { EvalCaseRun } from '../../contract/evals.ts';
import type { EvalToolCall, EvalTurn, KeptCase } from './keptCases.ts';
import type { JudgeVerdict } from './scores.ts';

/** One case scored: its replay's turns, the expectations it fails, the judge's verdict. */
export interface ScoredCase {
  kept: KeptCase;
  run: EvalCaseRun;
  turns: EvalTurn[];
  failures: string[];
  verdict?: JudgeVerdict;
}

/** What a report says of its run besides the cases. */
export interface EvalRunFacts {
  runId: string;
  candidate: string;
  mode: 'recorded' | 'live';
  baseline: EvalReport | undefined;
  durationMs: number;
}

/** Tokens, cost and Actions of one side of the comparison. */
export interface EvalFigures {
  /** Input and output tokens. */
  tokens: number;
  /** Cost, in the workers' price table's currency. */
  cost: number;
  /**
   * Temporal Cloud Actions of the turns (their results' `spend.actions`); the conversation's start
   * and end, outside any turn, are left out on both sides.
   */
  actions: number;
  /** Milliseconds the turns worked, summed (their results' `spend.wallTimeSeconds`). */
  workMs: number;
}

/** Milliseconds the replay's turns took, summed. */
export interface EvalLatency {
  /** Milliseconds. */
  latencyMs: number;
}

/** One side of a turn: its last reply, its tool calls and its Actions. */
export interface EvalSide {
  /** The turn's last reply. */
  reply: string;
  /** Its tool calls with their results. */
  toolCalls: EvalToolCall[];
  /** Temporal Cloud Actions the turn used (0 when its result was not readable). */
  actions: number;
}

/** The totals of a report. */
export interface EvalSummary {
  /** Cases replayed. */
  cases: number;
  /** Cases that passed. */
  passed: number;
  /** `passed / cases`, from 0 to 1. */
  passRate: number;
  /** Cases that passed in the baseline and fail now. */
  regressions: number;
  /** Replayed calls that matched no kept call and had no stand-in. */
  diverged: number;
  /** The kept conversations' tokens, cost and Actions. */
  old: EvalFigures;
  /** The replays' tokens, cost, Actions and latency. */
  new: EvalFigures & EvalLatency;
}

/** How a replayed turn ended. */
export interface EvalTurnOutcome {
  /** The turn's status (`completed`, `failed`, …); `null` when a retried run found it answered. */
  status: string | null;
  /** Why it failed or stopped early. */
  error?: string;
}

/** One turn, the kept conversation's beside the replay's. */
export interface EvalTurnReport {
  /** The turn's number, from 1. */
  turn: number;
  /** Its user messages. */
  user: string[];
  /** What the kept conversation replied and called. */
  old: EvalSide;
  /** What the replay replied and called, its turn's status and error. */
  new: EvalSide & EvalTurnOutcome;
  /** Milliseconds the replay's turn took; `null` when a retried run found it answered. */
  latencyMs: number | null;
}

/** One case of a report. */
export interface EvalCaseReport {
  /** The kept conversation's id. */
  caseId: string;
  /** The replay's conversation id. */
  conversationId: string;
  /** No expectation failed and the judge, if any, passed it. */
  passed: boolean;
  /** Passed in the baseline, fails now. */
  regression: boolean;
  /** Why it failed, a sentence each. */
  failures: string[];
  /** The judge's verdict. */
  judge?: JudgeVerdict;
  /** Calls of the replay that matched no kept call and had no stand-in. */
  diverged: EvalToolCall[];
  /** The kept conversation's tokens, cost and Actions. */
  old: EvalFigures;
  /** The replay's tokens, cost, Actions and latency. */
  new: EvalFigures & EvalLatency;
  /** Each turn, old beside new. */
  turns: EvalTurnReport[];
}

/** What `runEval` returns and `yiem eval --json` writes. */
export interface EvalReport {
  /** The run's id (its workflow is `eval-<runId>`). */
  runId: string;
  /** The candidate's task queue. */
  candidate: string;
  /** How tool calls were answered. */
  mode: 'recorded' | 'live';
  /** The baseline report's run id. */
  baseline: string | null;
  /** Milliseconds the run took. */
  durationMs: number;
  /** The totals. */
  summary: EvalSummary;
  /** Regressions first, then other failures, then passes. */
  cases: EvalCaseReport[];
}

function figures(turns: readonly EvalTurn[]): EvalFigures {
  return {
    tokens: turns.reduce((sum, turn) => sum + turn.inputTokens + turn.outputTokens, 0),
    cost: turns.reduce((sum, turn) => sum + turn.cost, 0),
    actions: turns.reduce((sum, turn) => sum + turn.actions, 0),
    workMs: turns.reduce((sum, turn) => sum + turn.workMs, 0),
  };
}

function caseReport(scored: ScoredCase, baseline: EvalReport | undefined): EvalCaseReport {
  const { kept, run, turns, failures, verdict } = scored;
  const passed = failures.length === 0;
  const before = baseline?.cases.find((each) => each.caseId === kept.caseId);
  const latencyMs = run.turns.reduce((sum, turn) => sum + (turn.latencyMs ?? 0), 0);
  return {
    caseId: kept.caseId,
    conversationId: run.conversationId,
    passed,
    regression: before?.passed === true && !passed,
    failures,
    ...(verdict ? { judge: verdict } : {}),
    diverged: turns.flatMap((turn) => turn.toolCalls.filter((call) => call.answer === 'diverged')),
    old: figures(kept.turns),
    new: { ...figures(turns), latencyMs },
    turns: kept.turns.map((oldTurn, index) => {
      const newTurn = turns[index];
      const result = run.turns[index]?.result ?? null;
      return {
        turn: index + 1,
        user: oldTurn.user,
        old: { reply: oldTurn.reply, toolCalls: oldTurn.toolCalls, actions: oldTurn.actions },
        new: {
          reply: newTurn?.reply ?? '',
          toolCalls: newTurn?.toolCalls ?? [],
          actions: newTurn?.actions ?? 0,
          status: result?.status ?? null,
          ...(result?.error ? { error: result.error } : {}),
        },
        latencyMs: run.turns[index]?.latencyMs ?? null,
      };
    }),
  };
}

const rank = (each: EvalCaseReport): number => (each.regression ? 0 : each.passed ? 2 : 1);

/** The report of a finished run. */
export function reportOf(run: EvalRunFacts, scored: ScoredCase[]): EvalReport {
  const cases = scored.map((each) => caseReport(each, run.baseline)).sort((a, b) => rank(a) - rank(b));
  const sum = (pick: (each: EvalCaseReport) => number) =>
    cases.reduce((total, each) => total + pick(each), 0);
  const passed = cases.filter((each) => each.passed).length;
  return {
    runId: run.runId,
    candidate: run.candidate,
    mode: run.mode,
    baseline: run.baseline?.runId ?? null,
    durationMs: run.durationMs,
    summary: {
      cases: cases.length,
      passed,
      passRate: cases.length === 0 ? 0 : passed / cases.length,
      regressions: cases.filter((each) => each.regression).length,
      diverged: sum((each) => each.diverged.length),
      old: {
        tokens: sum((each) => each.old.tokens),
        cost: sum((each) => each.old.cost),
        actions: sum((each) => each.old.actions),
        workMs: sum((each) => each.old.workMs),
      },
      new: {
        tokens: sum((each) => each.new.tokens),
        cost: sum((each) => each.new.cost),
        actions: sum((each) => each.new.actions),
        workMs: sum((each) => each.new.workMs),
        latencyMs: sum((each) => each.new.latencyMs),
      },
    },
    cases,
  };
}

function shownCalls(calls: readonly EvalToolCall[]): string {
  return calls.map((call) => `${call.toolName}${call.answer === 'diverged' ? ' (diverged)' : ''}`).join(', ');
}

/** The terminal summary: totals, then regressions and other failures with the turns that differ. */
export function terminalSummary(report: EvalReport): string {
  const { summary } = report;
  const percent = (summary.passRate * 100).toFixed(1);
  const lines = [
    `eval ${report.runId} on ${report.candidate} (${report.mode}): ${summary.passed}/${summary.cases} passed (${percent}%)` +
      (report.baseline ? `, ${summary.regressions} regressions against ${report.baseline}` : ''),
    `tokens ${summary.old.tokens} → ${summary.new.tokens}   cost ${summary.old.cost.toFixed(4)} → ${summary.new.cost.toFixed(4)}   Actions ${summary.old.actions} → ${summary.new.actions}   turn time ${summary.old.workMs} → ${summary.new.workMs} ms   latency ${summary.new.latencyMs} ms   diverged calls ${summary.diverged}`,
  ];
  for (const each of report.cases.filter((item) => !item.passed || item.diverged.length > 0)) {
    const mark = each.regression ? 'REGRESSION' : each.passed ? 'diverged' : 'FAIL';
    lines.push(
      `${mark} ${each.caseId}: ${[...each.failures, ...each.diverged.map((call) => `${call.toolName} diverged`)].join('; ')}`,
    );
    for (const turn of each.turns.filter((item) => item.old.reply !== item.new.reply)) {
      lines.push(`  turn ${turn.turn} old: ${turn.old.reply} [${shownCalls(turn.old.toolCalls)}]`);
      lines.push(`  turn ${turn.turn} new: ${turn.new.reply} [${shownCalls(turn.new.toolCalls)}]`);
    }
  }
  return lines.join('\n');
}
