import type { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';

/**
 * The workflow's cancellation of this attempt, when that is why its signal aborted (not a timeout or
 * the worker shutting down, which Temporal retries). Thrown instead of whatever the aborted work
 * threw, it reports the attempt cancelled: the Web UI says so, and a local activity's retry policy
 * does not run it again.
 */
export function cancelledByWorkflow(context: Context): CancelledFailure | undefined {
  const { aborted, reason } = context.cancellationSignal;
  return aborted && reason instanceof CancelledFailure && reason.message === 'CANCELLED' ? reason : undefined;
}

/** Whether `attempt` is the last its retry policy allows (`maximumAttempts` 0: no limit). */
export function lastAttempt(attempt: number, maximumAttempts: number): boolean {
  return maximumAttempts > 0 && attempt >= maximumAttempts;
}
