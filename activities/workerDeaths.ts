import type { Context } from '@temporalio/activity';
import proto from '@temporalio/proto';
import { describeThrown } from '../src/contract/thrown.ts';

/**
 * A model or tool call whose worker died this many times (its attempts ended by a missed heartbeat:
 * killed, out of memory, a native crash) is not tried again, however many attempts its retry policy
 * allows. Workers die for other reasons too (a deploy's SIGKILL, a neighbour's out-of-memory), so it
 * stays above one or two.
 */
export const DEFAULT_MAX_WORKER_DEATHS = 5;

/**
 * What an attempt after a worker death keeps in its heartbeat details, so the attempts after it
 * carry the count on: `deaths` of the attempts before `attempt`. Only written once a worker has
 * died: a call whose attempts only fail ordinarily sends no heartbeat for it.
 */
export interface WorkerDeathMark {
  attempt: number;
  deaths: number;
}

/** The heartbeat details of an attempt that carries a mark: its progress beside it. */
interface MarkedDetails {
  workerDeaths: WorkerDeathMark;
  progress?: unknown;
}

/**
 * How many earlier attempts of this activity ended with their worker gone. The first attempt has
 * none and asks nothing. A later one reads the previous attempt's failure from the server (the
 * activity's pending state: a heartbeat timeout is a worker that died or stopped answering; a start-
 * to-close timeout or a thrown error is not) and the count the attempts before it carried in their
 * heartbeat details. An attempt between the mark and the previous one left no mark although its
 * count was above zero: it died before writing it, and counts too. When the server cannot be asked,
 * the previous attempt counts as not dead: a death missed seals a call later, never wrongly.
 */
export async function workerDeathsBefore(context: Context, warn: (message: string) => void): Promise<number> {
  const { attempt, isLocal, heartbeatTimeoutMs } = context.info;
  // A local activity has no heartbeat, and a worker that dies with it takes its workflow task along.
  if (attempt <= 1 || isLocal || !heartbeatTimeoutMs) return 0;
  const mark = markOf(context.info.heartbeatDetails);
  const earlier = mark ? mark.deaths + Math.max(0, attempt - 2 - mark.attempt) : 0;
  let previousDied = false;
  try {
    previousDied = await previousAttemptLostItsWorker(context);
  } catch (error) {
    warn(`could not read attempt ${attempt - 1}'s failure to count worker deaths: ${describeThrown(error)}`);
  }
  return earlier + (previousDied ? 1 : 0);
}

/**
 * Keeps `deaths` in the server's heartbeat details before the attempt runs its call, waiting for
 * the server's answer: a call that kills its worker at once must not take the count down with it.
 * One billed heartbeat, only on attempts that follow a worker death.
 */
export async function keepWorkerDeaths(
  context: Context,
  deaths: number,
  warn: (message: string) => void,
): Promise<void> {
  if (deaths === 0) return;
  try {
    await context.client.activity.heartbeat(context.info.taskToken, markedDetails(context, deaths));
  } catch (error) {
    warn(`could not keep the count of worker deaths: ${describeThrown(error)}`);
  }
}

/** The details of this attempt's heartbeats: its progress, with the count once a worker has died. */
export function markedDetails(context: Context, deaths: number, progress?: unknown): unknown {
  if (deaths === 0) return progress;
  const marked: MarkedDetails = { workerDeaths: { attempt: context.info.attempt, deaths } };
  return progress === undefined ? marked : { ...marked, progress };
}

/** Whether a call that has seen `deaths` worker deaths is given up (`limit` 0: never). */
export function sealedByWorkerDeaths(deaths: number, limit: number): boolean {
  return limit > 0 && deaths >= limit;
}

function markOf(details: unknown): WorkerDeathMark | undefined {
  const mark = (details as Partial<MarkedDetails> | null | undefined)?.workerDeaths;
  if (typeof mark?.attempt !== 'number' || typeof mark.deaths !== 'number') return undefined;
  return mark;
}

/** Whether the server ended the previous attempt for a missed heartbeat. */
async function previousAttemptLostItsWorker(context: Context): Promise<boolean> {
  const { workflowExecution, workflowNamespace, activityId } = context.info;
  if (!workflowExecution) return false;
  const described = await context.client.workflowService.describeWorkflowExecution({
    namespace: workflowNamespace ?? context.info.activityNamespace,
    execution: { workflowId: workflowExecution.workflowId, runId: workflowExecution.runId },
  });
  const pending = described.pendingActivities?.find((activity) => activity.activityId === activityId);
  const timeout = pending?.lastFailure?.timeoutFailureInfo?.timeoutType;
  return timeout === proto.temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT;
}
