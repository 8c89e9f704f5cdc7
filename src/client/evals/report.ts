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

/** Tokens, cost and latency of one side of the comparison. */
export interface EvalFigures {
  /** Input and output tokens together. */
  tokens: number;
  /** Cost at the worker's prices. */
  cost: number;
}

/** One turn, the kept conversation's beside the replay's. */
export interface EvalTurnReport {
  /** The turn's number, from 1. */
  turn: number;
  /** The user messages it answered (the kept ones, which the replay sent). */
  user: string[];
  /** The kept conversation's turn. */
  old: {
    /** Its last reply text. */
    reply: string;
    /** Its tool calls. */
    toolCalls: EvalToolCall[];
  };
  /** The replay's turn. */
  new: {
    /** Its last reply text. */
    reply: string;
    /** Its tool calls, each with how it was answered. */
    toolCalls: EvalToolCall[];
    /** How the turn ended; null when it did not. */
    status: string | null;
    /** Why it failed, when it did. */
    error?: string;
  };
  /** How long the replay's turn took; null when it did not end. */
  latencyMs: number | null;
}

/** One case of a report. */
export interface EvalCaseReport {
  /** The kept conversation's id. */
  caseId: string;
  /** The replay's conversation id, to open it. */
  conversationId: string;
  /** No expectation failed, and the judge (if any) passed it. */
  passed: boolean;
  /** Passed in the baseline, fails now. */
  regression: boolean;
  /** Each expectation that did not hold, in words. */
  failures: string[];
  /** What the judge said, when there is one. */
  judge?: JudgeVerdict;
  /** Calls of the replay that matched no kept call and had no stand-in. */
  diverged: EvalToolCall[];
  /** What the kept conversation used. */
  old: EvalFigures;
  /** What the replay used, and how long its turns took. */
  new: EvalFigures & {
    /** Its turns' time together. */
    latencyMs: number;
  };
  /** Turn by turn, the kept beside the replay. */
  turns: EvalTurnReport[];
}

/** What `runEval` returns and `yiem eval --json` writes. */
export interface EvalReport {
  /** The run's id (its workflow is `eval-<runId>`). */
  runId: string;
  /** The candidate's task queue. */
  candidate: string;
  /** Whether tools ran (`'live'`) or were answered from the kept calls. */
  mode: 'recorded' | 'live';
  /** The baseline report's run id, or null without one. */
  baseline: string | null;
  /** How long the run took. */
  durationMs: number;
  /** The cases' figures together. */
  summary: {
    /** Cases replayed. */
    cases: number;
    /** Cases that passed. */
    passed: number;
    /** `passed / cases`, from 0 to 1 (0 without cases). */
    passRate: number;
    /** Cases that passed in the baseline and fail now. */
    regressions: number;
    /** Calls that matched no kept call and had no stand-in, over all cases. */
    diverged: number;
    /** What the kept conversations used. */
    old: EvalFigures;
    /** What the replays used. */
    new: EvalFigures & {
      /** Their turns' time together. */
      latencyMs: number;
    };
  };
  /** Regressions first, then other failures, then passes. */
  cases: EvalCaseReport[];
}

function figures(turns: readonly EvalTurn[]): EvalFigures {
  return {
    tokens: turns.reduce((sum, turn) => sum + turn.inputTokens + turn.outputTokens, 0),
    cost: turns.reduce((sum, turn) => sum + turn.cost, 0),
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
        old: { reply: oldTurn.reply, toolCalls: oldTurn.toolCalls },
        new: {
          reply: newTurn?.reply ?? '',
          toolCalls: newTurn?.toolCalls ?? [],
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
      old: { tokens: sum((each) => each.old.tokens), cost: sum((each) => each.old.cost) },
      new: {
        tokens: sum((each) => each.new.tokens),
        cost: sum((each) => each.new.cost),
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
    `tokens ${summary.old.tokens} → ${summary.new.tokens}   cost ${summary.old.cost.toFixed(4)} → ${summary.new.cost.toFixed(4)}   latency ${summary.new.latencyMs} ms   diverged calls ${summary.diverged}`,
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
