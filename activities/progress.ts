/**
 * Largest progress report a tool may send, as JSON in UTF-8 bytes. Each one becomes heartbeat
 * details and an event (carried by a signal or in the tool's result), so a large one could push a
 * payload past Temporal's limit and lose the tool's result.
 */
export const MAX_PROGRESS_BYTES = 32 * 1024;

/** The report as sent, or a small note in its place when it is too large or not JSON. */
export function limitProgress(partial: Record<string, unknown>): Record<string, unknown> {
  let json: string | undefined;
  try {
    json = JSON.stringify(partial);
  } catch {
    // Cyclic or with a BigInt: nothing of it can travel.
  }
  if (json === undefined) return { dropped: 'this progress report could not be serialised as JSON' };
  const bytes = new TextEncoder().encode(json).length;
  if (bytes <= MAX_PROGRESS_BYTES) return partial;
  return { dropped: `this progress report had ${bytes} bytes; at most ${MAX_PROGRESS_BYTES} are kept` };
}
