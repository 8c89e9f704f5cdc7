import type { WorkflowHandle } from '@temporalio/client';

/** gRPC status codes of a server that does not answer: UNAVAILABLE, DEADLINE_EXCEEDED. */
const UNREACHABLE_CODES = new Set([14, 4]);
/** One probe of a server that may be down waits at most this long. */
const PROBE_TIMEOUT_MS = 3_000;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

/** Whether `error` (or one of its causes) says Temporal could not be reached, rather than refused a call. */
export function isUnreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 8; depth++) {
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (typeof code === 'number' && UNREACHABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && /ECONNREFUSED|No connection established|UNAVAILABLE/.test(message)) {
      return true;
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** Whether the conversation's Temporal answers now, asked with a short deadline. */
export async function reachable(handle: WorkflowHandle): Promise<boolean> {
  try {
    await handle.client.connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => handle.describe());
    return true;
  } catch (error) {
    if (isUnreachable(error)) return false;
    throw error;
  }
}

/**
 * Waits, with backoff, until the conversation's Temporal answers again. Resolves `false` when
 * `signal` aborts first; throws what is not an outage (the conversation is gone, say).
 */
export async function untilReachable(handle: WorkflowHandle, signal?: AbortSignal): Promise<boolean> {
  for (let delay = FIRST_RETRY_MS; !signal?.aborted; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
    if (await reachable(handle)) return true;
    await sleep(delay, signal);
  }
  return false;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
