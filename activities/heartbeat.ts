import type { Context } from '@temporalio/activity';

/**
 * How often a running activity heartbeats. Each heartbeat that reaches the server is a billed Action,
 * and the SDK sends an attempt's first at once and then at most one per 0.8 × the timeout (and at
 * least one a minute): beating at half the timeout, never on each progress report, a call shorter
 * than that sends none and a 60 s tool with the default 30 s timeout sends two. A short timeout keeps
 * a third of it for the first beat, so a busy event loop is not taken for a dead worker; a long one
 * beats at least once a minute, as cancellation reaches the activity only on a heartbeat's answer.
 */
function heartbeatIntervalMs(timeoutMs: number): number {
  const halfLeavingFiveSeconds = Math.min(timeoutMs / 2, timeoutMs - 5_000);
  const interval = Math.max(timeoutMs / 3, halfLeavingFiveSeconds);
  return Math.min(60_000, Math.max(100, interval));
}

/**
 * Heartbeats while an activity runs (see `heartbeatIntervalMs`), carrying `details()`: a tool's latest
 * progress, which the Web UI shows as the activity's heartbeat details.
 */
export function heartbeatWhileRunning(context: Context, details?: () => unknown): () => void {
  const timeoutMs = context.info.heartbeatTimeoutMs;
  if (!timeoutMs) return () => {};
  const timer = setInterval(() => context.heartbeat(details?.()), Math.floor(heartbeatIntervalMs(timeoutMs)));
  return () => clearInterval(timer);
}
