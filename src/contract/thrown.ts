import { THROWN_VALUE_CHARS } from './limits.ts';
import { truncate } from './truncate.ts';

/**
 * What a thrown value says, in words: an Error's message, a string as it is, anything else (a plain
 * object, a number) as JSON, so nobody reads `[object Object]`. The one rule for the text of a thrown
 * value; workflow code unwraps Temporal's failures (ActivityFailure, TimeoutFailure) before asking it,
 * and the sandbox's prelude repeats it inside the isolate.
 */
export function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message;
  if (typeof thrown === 'string') return thrown;
  let json: string | undefined;
  try {
    json = JSON.stringify(thrown);
  } catch {
    // Cyclic or with a BigInt: String() below is the best there is.
  }
  return truncate(json ?? String(thrown), THROWN_VALUE_CHARS);
}
