import { executeChild, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { evalProgressQuery } from '../src/contract/definitions.ts';
import type {
  EvalActivities,
  EvalCaseInput,
  EvalCaseRun,
  EvalProgress,
  EvalRunInput,
} from '../src/contract/evals.ts';

/**
 * An eval run: each case a child workflow, at most `concurrency` at once. A worker that crashes
 * mid-run loses nothing finished: the children that completed are in this history and are not
 * started again, and a running case's activity is retried on its own conversation.
 */
export async function evalRunWorkflow(input: EvalRunInput): Promise<EvalCaseRun[]> {
  const progress: EvalProgress = { total: input.cases.length, finished: [], running: [] };
  setHandler(evalProgressQuery, () => progress);
  const runs: EvalCaseRun[] = new Array(input.cases.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < input.cases.length) {
      const index = next++;
      const each = input.cases[index] as EvalCaseInput;
      progress.running.push(each.caseId);
      runs[index] = await executeChild(evalCaseWorkflow, {
        workflowId: `${workflowInfo().workflowId}/${each.caseId}`,
        args: [each],
        staticSummary: `eval case ${each.caseId}`,
      });
      progress.running = progress.running.filter((id) => id !== each.caseId);
      progress.finished.push(each.caseId);
    }
  };
  const lanes = Math.max(1, Math.min(input.concurrency, input.cases.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  return runs;
}

/** One case: the replay runs in an activity, retried after a crash (its heartbeats stop). */
export async function evalCaseWorkflow(input: EvalCaseInput): Promise<EvalCaseRun> {
  const { runEvalCase } = proxyActivities<EvalActivities>({
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumAttempts: 20 },
    summary: `replay ${input.caseId}`,
  });
  return runEvalCase(input);
}
