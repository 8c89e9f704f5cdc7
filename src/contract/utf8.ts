/**
 * UTF-8 byte counting, the unit of every byte limit in limits.ts. TextEncoder, not Buffer, so that
 * workflow code may use it.
 */
const encoder = new TextEncoder();

/** How many bytes `text` takes in UTF-8 (a lone surrogate counts as the 3 bytes of U+FFFD). */
export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

/**
 * An upper bound of `utf8Bytes(text)` without encoding it: a UTF-16 unit never takes more than three
 * UTF-8 bytes. A text whose bound is within a limit is within it for certain.
 */
export function maxUtf8Bytes(text: string): number {
  return text.length * 3;
}

/**
 * The longest prefix of `text` within `maxBytes` UTF-8 bytes, never splitting a character.
 * `encodeInto` stops before the first character that does not fit and says how many UTF-16 units it
 * read, so one native pass over at most `maxBytes` bytes does the cut: a 12 MB tool result is cut in
 * milliseconds, not seconds of a per-character loop that blocks the worker's event loop.
 */
export function utf8Prefix(text: string, maxBytes: number): string {
  if (maxUtf8Bytes(text) <= maxBytes) return text;
  const { read } = encoder.encodeInto(text, new Uint8Array(Math.max(0, maxBytes)));
  return text.slice(0, read);
}
