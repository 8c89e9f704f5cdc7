import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';

/** The innermost cause's message: what actually went wrong, not the activity wrapper. */
export function failureMessage(error: unknown): string {
  let cause: unknown = error;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  if (cause instanceof TimeoutFailure) return `timed out (${cause.timeoutType})`;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return String(cause);
}
