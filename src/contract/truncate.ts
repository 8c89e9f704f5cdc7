/**
 * Cuts `text` to at most `maxChars` characters, the last of them `…` when anything was cut. It
 * counts code points, so an emoji is never split in half. Each caller passes its named limit from
 * limits.ts.
 */
export function truncate(text: string, maxChars: number): string {
  // UTF-16 units are never fewer than code points: a text this short has nothing to cut.
  if (text.length <= maxChars) return text;
  let count = 0;
  let keptEnd = 0;
  let end = 0;
  for (const char of text) {
    count += 1;
    if (count > maxChars) return `${text.slice(0, keptEnd)}…`;
    end += char.length;
    if (count === maxChars - 1) keptEnd = end;
  }
  return text;
}

/** The first line of `text`, cut to `maxChars` characters. */
export function firstLine(text: string, maxChars: number): string {
  return truncate(text.split('\n')[0] ?? '', maxChars);
}

/**
 * `text` in pieces of at most `maxUnits` UTF-16 units (a string's length), none cut inside a
 * surrogate pair, so an emoji is never split between two pieces.
 */
export function textPieces(text: string, maxUnits: number): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + maxUnits, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && end - start > 1 && last >= 0xd800 && last <= 0xdbff) end -= 1;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
