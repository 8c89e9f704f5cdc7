/** Longest description of a thrown non-Error value, so a huge object cannot flood a tool result. */
const MAX_DESCRIPTION_LENGTH = 2_000;

/**
 * What a thrown value says, in words: an Error's message, a string as it is, anything else (a plain
 * object, a number) as JSON, so nobody reads `[object Object]`.
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
  const text = json ?? String(thrown);
  return text.length > MAX_DESCRIPTION_LENGTH ? `${text.slice(0, MAX_DESCRIPTION_LENGTH - 1)}…` : text;
}
