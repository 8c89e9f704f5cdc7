import { ActivityFailure, TimeoutFailure } from '@temporalio/workflow';
import { describeThrown } from '../src/contract/thrown.ts';

/** The innermost cause's message: what actually went wrong, not the activity wrapper. */
export function failureMessage(error: unknown): string {
  let cause: unknown = error;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  if (cause instanceof TimeoutFailure) return `timed out (${cause.timeoutType})`;
  return describeThrown(cause);
}
