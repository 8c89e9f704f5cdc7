import { MAX_PROGRESS_BYTES } from '../src/contract/limits.ts';
import { utf8Bytes } from '../src/contract/utf8.ts';

/** The report as sent, or a small note in its place when it is too large or not JSON. */
export function limitProgress(partial: Record<string, unknown>): Record<string, unknown> {
  let json: string | undefined;
  try {
    json = JSON.stringify(partial);
  } catch {
    // Cyclic or with a BigInt: nothing of it can travel.
  }
  if (json === undefined) return { dropped: 'this progress report could not be serialised as JSON' };
  const bytes = utf8Bytes(json);
  if (bytes <= MAX_PROGRESS_BYTES) return partial;
  return { dropped: `this progress report had ${bytes} bytes; at most ${MAX_PROGRESS_BYTES} are kept` };
}
