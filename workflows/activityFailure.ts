import { NexusOperationFailure, RetryState, TimeoutType } from '@temporalio/common';
import { ActivityFailure, TimeoutFailure } from '@temporalio/workflow';
import { describeThrown } from '../src/contract/thrown.ts';

/**
 * The innermost cause's message: what actually went wrong, not the activity or Nexus operation
 * wrapper (nor the Nexus handler error around a handler's failure).
 */
export function failureMessage(error: unknown): string {
  let cause: unknown = error;
  while (isWrapper(cause) && cause.cause) cause = cause.cause;
  if (cause instanceof TimeoutFailure) return `timed out (${cause.timeoutType})`;
  return describeThrown(cause);
}

/** nexus-rpc's `HandlerError` is known by name: workflow code imports no Nexus package. */
function isWrapper(error: unknown): error is Error {
  return (
    error instanceof ActivityFailure ||
    error instanceof NexusOperationFailure ||
    (error instanceof Error && error.name === 'HandlerError')
  );
}

/**
 * The failure an activity ended with. The SDK hands the workflow an activity's wrapped in an
 * `ActivityFailure`, and a local activity's as it was thrown.
 */
export function activityFailureCause(error: unknown): unknown {
  return error instanceof ActivityFailure ? error.cause : error;
}

/**
 * An activity whose attempts are used up with the last one's worker gone: it missed its heartbeat
 * timeout (the process died, was killed or hung).
 */
export function workerLost(error: unknown): boolean {
  if (!(error instanceof ActivityFailure)) return false;
  const { cause } = error;
  return (
    cause instanceof TimeoutFailure &&
    cause.timeoutType === TimeoutType.HEARTBEAT &&
    error.retryState === RetryState.MAXIMUM_ATTEMPTS_REACHED
  );
}
