import { describe, expect, it } from 'vitest';
import { summarizeToolCall } from '../../activities/summary.ts';

describe('summarizeToolCall', () => {
  it('shows the tool and its arguments as JSON values', () => {
    expect(summarizeToolCall('getWeather', { city: 'Tokyo', units: 'celsius' })).toBe(
      'getWeather(city: "Tokyo", units: "celsius")',
    );
  });

  it('shows a call without arguments with empty parentheses', () => {
    expect(summarizeToolCall('listTools', {})).toBe('listTools()');
  });

  it('renders numbers, booleans, null, arrays and objects as JSON', () => {
    expect(summarizeToolCall('f', { n: 3, ok: true, none: null, list: [1, 'a'], obj: { k: 'v' } })).toBe(
      'f(n: 3, ok: true, none: null, list: [1,"a"], obj: {"k":"v"})',
    );
  });

  it('stays on one line even when a value has newlines', () => {
    const line = summarizeToolCall('write', { text: 'line one\nline two', 'multi\nline key': 1 });
    expect(line).not.toMatch(/[\n\r]/);
    expect(line).toContain('line one\\nline two');
  });

  it('keeps a summary of exactly 120 characters whole', () => {
    const value = 'x'.repeat(120 - 'f(a: "")'.length);
    const line = summarizeToolCall('f', { a: value });
    expect(line).toHaveLength(120);
    expect(line.endsWith('")')).toBe(true);
  });

  it('cuts a long summary to 120 characters ending with an ellipsis', () => {
    const line = summarizeToolCall('f', { a: 'y'.repeat(500) });
    expect(line).toHaveLength(120);
    expect(line.startsWith('f(a: "yyy')).toBe(true);
    expect(line.endsWith('…')).toBe(true);
  });

  // Regression: the cut counts UTF-16 code units, so it can split a surrogate pair and leave a lone
  // surrogate before the ellipsis (shown as U+FFFD in the Temporal UI).
  it('does not split an emoji when cutting', () => {
    // 'f(a: "' is 6 characters; 112 x's put the emoji's high surrogate at index 118 and its low one at 119.
    const line = summarizeToolCall('f', { a: `${'x'.repeat(112)}😀😀😀` });
    expect(line.endsWith('…')).toBe(true);
    const beforeEllipsis = line.charCodeAt(line.length - 2);
    const isLoneHighSurrogate = beforeEllipsis >= 0xd800 && beforeEllipsis <= 0xdbff;
    expect(isLoneHighSurrogate, `code unit before the ellipsis: 0x${beforeEllipsis.toString(16)}`).toBe(
      false,
    );
  });
});
