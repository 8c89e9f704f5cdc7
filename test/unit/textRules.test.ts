import { describe, expect, it } from 'vitest';
import { describeThrown } from '../../src/contract/thrown.ts';
import { firstLine, textPieces, truncate } from '../../src/contract/truncate.ts';
import { maxUtf8Bytes, utf8Bytes, utf8Prefix } from '../../src/contract/utf8.ts';

describe('truncate', () => {
  it('keeps a text within the limit as it is', () => {
    expect(truncate('hello', 5)).toBe('hello');
  });

  it('cuts a longer text to the limit, the last character an ellipsis', () => {
    expect(truncate('hello world', 5)).toBe('hell…');
  });

  it('counts an emoji as one character and never splits it', () => {
    expect(truncate('😀😀😀', 3)).toBe('😀😀😀');
    expect(truncate('😀😀😀😀', 3)).toBe('😀😀…');
  });

  it('cuts the first line of a text', () => {
    expect(firstLine('a long first line\nsecond', 8)).toBe('a long …');
  });
});

describe('textPieces', () => {
  it('cuts a text into pieces of at most the limit that join to it again', () => {
    expect(textPieces('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    expect(textPieces('abc', 3)).toEqual(['abc']);
    expect(textPieces('', 3)).toEqual([]);
  });

  it('never splits an emoji between two pieces', () => {
    const text = 'ab😀cd😀';
    const pieces = textPieces(text, 3);
    expect(pieces).toEqual(['ab', '😀c', 'd😀']);
    expect(pieces.join('')).toBe(text);
  });
});

describe('UTF-8 bytes', () => {
  it('counts bytes, not characters', () => {
    expect(utf8Bytes('é😀')).toBe(6);
    expect(maxUtf8Bytes('é😀')).toBeGreaterThanOrEqual(6);
  });

  it('keeps the longest prefix within a byte budget without splitting a character', () => {
    expect(utf8Prefix('ééé', 5)).toBe('éé');
    expect(utf8Prefix('abc', 5)).toBe('abc');
    expect(utf8Prefix('a😀b', 4)).toBe('a');
    expect(utf8Prefix('a😀b', 5)).toBe('a😀');
  });

  it('counts a lone surrogate as the three bytes of U+FFFD, as utf8Bytes does', () => {
    expect(utf8Prefix('\uD800ab', 3)).toBe('\uD800');
    expect(utf8Prefix('\uD800ab', 2)).toBe('');
    expect(utf8Prefix('x\uDC00\uD800y', 7)).toBe('x\uDC00\uD800');
  });

  it('cuts a 12 MB text to a 4 MB budget exactly', () => {
    const text = `${'é'.repeat(6 * 1024 * 1024)}`;
    const cut = utf8Prefix(text, 4 * 1024 * 1024 + 1);
    expect(utf8Bytes(cut)).toBe(4 * 1024 * 1024);
    expect(cut).toHaveLength(2 * 1024 * 1024);
  });
});

describe('describeThrown', () => {
  it('says what an Error, a string and a plain object say', () => {
    expect(describeThrown(new Error('boom'))).toBe('boom');
    expect(describeThrown('plain')).toBe('plain');
    expect(describeThrown({ code: 42 })).toBe('{"code":42}');
  });

  it('cuts a huge thrown object', () => {
    expect(describeThrown({ blob: 'x'.repeat(10_000) })).toHaveLength(2_000);
  });
});
