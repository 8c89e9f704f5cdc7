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

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes, never splitting a character. */
export function utf8Prefix(text: string, maxBytes: number): string {
  if (utf8Bytes(text) <= maxBytes) return text;
  let end = 0;
  let bytes = 0;
  for (const char of text) {
    const size = utf8Bytes(char);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}
