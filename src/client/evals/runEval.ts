import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import { type EvalRunWorkflow, evalProgressQuery } from '../../contract/definitions.ts';
import type { EvalCaseInput, EvalCaseRun, EvalProgress } from '../../contract/evals.ts';
import type { AgentClient } from '../client.ts';
import {
  conversationsOf,
  type KeptCase,
  readExportedCases,
  readKeptCase,
  transcriptTurns,
  withActions,
} from './keptCases.ts';
import { type EvalReport, reportOf, type ScoredCase } from './report.ts';
import { type EvalExpectations, type EvalJudge, expectationOf, failedExpectations, judge } from './scores.ts';

/** The agent under test: a task queue whose workers have the new model, prompt or tools. */
export interface EvalCandidate {
  /** The candidate workers' task queue, where the run and its replays run. */
  taskQueue: string;
  /** Replaces the kept conversations' system prompt. */
  systemPrompt?: string;
  /** Replaces their model (the candidate worker's name for it). */
  model?: string;
  /** Replaces the tools they offered. */
  tools?: string[];
}

/** What `runEval` replays, on what, and how it scores. */
export interface RunEvalOptions {
  /** The kept conversations, by id. */
  conversations?: string[];
  /** Or the ones a visibility query finds, e.g. `YiemAgent = 'support' AND StartTime > '2026-11-30T00:00:00Z'`. */
  query?: string;
  /**
   * Or the ones in exported history files (`yiem export-histories`): folders of them, or files. Read
   * here, from the files alone; their large messages from the payload store of this client.
   */
  histories?: string[];
  /** The agent the kept conversations are replayed on. */
  candidate: EvalCandidate;
  /** `'recorded'` (the default): no tool runs. `'live'`: tools run, at-most-once ones only if allowed. */
  mode?: 'recorded' | 'live';
  /** Result texts, by tool, for calls that match no kept call. */
  standIns?: Record<string, string>;
  /** In live mode, run at-most-once tools too. */
  allowAtMostOnce?: boolean;
  /** What each case is expected to do. */
  expectations?: EvalExpectations;
  /** A model that judges each case against a rubric. */
  judge?: EvalJudge;
  /** Cases replayed at once. Default 4. */
  concurrency?: number;
  /** A previous run's report: a case that passed there and fails now is a regression. */
  baseline?: EvalReport;
  /** Names the run (its workflow is `eval-<runId>`); a run started again with it resumes. Default: random. */
  runId?: string;
  /** Called as cases finish. */
  onProgress?: (progress: EvalProgress) => void;
}

const PROGRESS_POLL_MS = 500;

/** The replay's options: the kept conversation's, the candidate's changes, and the recorded tools. */
function caseInput(kept: KeptCase, options: RunEvalOptions, runId: string): EvalCaseInput {
  const { candidate } = options;
  return {
    caseId: kept.caseId,
    conversationId: `eval-${runId}-${kept.caseId}`,
    taskQueue: candidate.taskQueue,
    options: {
      ...kept.options,
      ...(candidate.systemPrompt !== undefined ? { systemPrompt: candidate.systemPrompt } : {}),
      ...(candidate.model !== undefined ? { model: candidate.model } : {}),
      ...(candidate.tools !== undefined ? { tools: candidate.tools } : {}),
      recordedTools: {
        mode: options.mode ?? 'recorded',
        calls: kept.recorded,
        ...(options.standIns ? { standIns: options.standIns } : {}),
        ...(options.allowAtMostOnce ? { allowAtMostOnce: true } : {}),
      },
    },
    turns: kept.turns.map((turn) => turn.user),
  };
}

/** Starts the run's workflow, or finds the one a previous call with the same run id started. */
async function startRun(
  agents: AgentClient,
  runId: string,
  cases: EvalCaseInput[],
  options: RunEvalOptions,
): Promise<WorkflowHandle<EvalRunWorkflow>> {
  const workflowId = `eval-${runId}`;
  try {
    return await agents.client.workflow.start<EvalRunWorkflow>('evalRunWorkflow', {
      workflowId,
      taskQueue: options.candidate.taskQueue,
      args: [{ cases, concurrency: options.concurrency ?? 4 }],
      staticSummary: `eval ${runId}: ${cases.length} conversations on ${options.candidate.taskQueue}`,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    return agents.client.workflow.getHandle<EvalRunWorkflow>(workflowId);
  }
}

/** Waits for the run's result, telling `onProgress` what finished meanwhile. */
async function followRun(handle: WorkflowHandle<EvalRunWorkflow>, onProgress?: RunEvalOptions['onProgress']) {
  const result = handle.result();
  if (!onProgress) return result;
  let done = false;
  void result.finally(() => {
    done = true;
  });
  let seen = -1;
  while (!done) {
    const progress = await handle.query(evalProgressQuery).catch(() => undefined);
    if (progress && progress.finished.length !== seen) {
      seen = progress.finished.length;
      onProgress(progress);
    }
    await Promise.race([result.catch(() => undefined), sleep(PROGRESS_POLL_MS)]);
  }
  const runs = await result;
  if (runs.length !== seen)
    onProgress({ total: runs.length, finished: runs.map((run) => run.caseId), running: [] });
  return runs;
}

/** The kept conversations of the ids, the query and the exported files, each once. */
async function keptCases(agents: AgentClient, options: RunEvalOptions): Promise<KeptCase[]> {
  const exported = options.histories?.length
    ? await readExportedCases(agents.client.options.loadedDataConverter, options.histories)
    : [];
  const ids = [...(options.conversations ?? [])];
  if (options.query) ids.push(...(await conversationsOf(agents.client, options.query)));
  const fromServer = [...new Set(ids)].filter((id) => !exported.some((each) => each.caseId === id));
  const kept = [...exported, ...(await Promise.all(fromServer.map((id) => readKeptCase(agents, id))))];
  if (kept.length === 0)
    throw new Error('An eval needs kept conversations: give their ids, a query or exported history files');
  return kept;
}

async function scoreCase(
  agents: AgentClient,
  kept: KeptCase,
  run: EvalCaseRun,
  options: RunEvalOptions,
): Promise<ScoredCase> {
  // From the candidate's worker: a transcript read back from history lacks the calls the workflow
  // answered from the record, which ran no activity.
  const messages = await agents.getConversation(run.conversationId).messages();
  const turns = transcriptTurns(messages);
  withActions(
    turns,
    run.turns.map((turn) => turn.result),
  );
  const expectation = expectationOf(options.expectations, kept.caseId);
  const failures = failedExpectations(turns, expectation);
  const rubric = expectation.rubric ?? options.judge?.rubric;
  const verdict = options.judge && rubric ? await judge(options.judge, rubric, turns) : undefined;
  if (verdict && !verdict.pass) failures.push(`the judge failed it: ${verdict.reason}`);
  return { kept, run, turns, failures, ...(verdict ? { verdict } : {}) };
}

/**
 * Replays kept conversations on a candidate agent, turn by turn, in a durable eval run (the
 * `evalRunWorkflow` on the candidate's task queue), and scores each replay against its expectations,
 * the judge and the kept conversation.
 */
export async function runEval(agents: AgentClient, options: RunEvalOptions): Promise<EvalReport> {
  const kept = await keptCases(agents, options);
  const runId = options.runId ?? randomUUID().slice(0, 8);
  const cases = kept.map((each) => caseInput(each, options, runId));
  const started = Date.now();
  const runs = await followRun(await startRun(agents, runId, cases, options), options.onProgress);
  const scored = await Promise.all(
    runs.map((run, index) => scoreCase(agents, kept[index] as KeptCase, run, options)),
  );
  const { candidate, mode = 'recorded', baseline } = options;
  const facts = { runId, candidate: candidate.taskQueue, mode, baseline, durationMs: Date.now() - started };
  return reportOf(facts, scored);
}
