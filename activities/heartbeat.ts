import type { Context } from '@temporalio/activity';

/**
 * Heartbeats at half the heartbeat timeout, so a live but quiet activity is never taken for dead,
 * carrying `details()` (a tool's latest progress). Each heartbeat that reaches the server is a billed
 * Action, and the SDK sends the first at once and then at most one per 0.8 × the timeout: beating
 * only here, never on each progress report, a call shorter than half the timeout sends none, and a
 * 60 s tool with the default 30 s timeout sends two.
 */
export function heartbeatWhileRunning(context: Context, details?: () => unknown): () => void {
  const timeoutMs = context.info.heartbeatTimeoutMs;
  if (!timeoutMs) return () => {};
  const timer = setInterval(() => context.heartbeat(details?.()), Math.max(100, Math.floor(timeoutMs / 2)));
  return () => clearInterval(timer);
}
