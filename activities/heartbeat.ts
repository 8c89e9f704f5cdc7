import type { Context } from '@temporalio/activity';

/** Heartbeats at a third of the heartbeat timeout, so a live but quiet tool is never taken for dead. */
export function heartbeatWhileRunning(context: Context): () => void {
  const timeoutMs = context.info.heartbeatTimeoutMs;
  if (!timeoutMs) return () => {};
  const timer = setInterval(() => context.heartbeat(), Math.max(100, Math.floor(timeoutMs / 3)));
  return () => clearInterval(timer);
}
