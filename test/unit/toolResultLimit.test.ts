import { describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import { limitToolResult } from '../../src/contract/toolResultLimit.ts';

const bytes = (text: string): number => new TextEncoder().encode(text).length;

describe('limitToolResult', () => {
  it('leaves a result within the cap untouched', () => {
    const result = textResult('small', { rows: 1 });
    expect(limitToolResult(result, 100)).toBe(result);
  });

  it('keeps the first bytes of the text and tells the model what was cut', () => {
    const result = limitToolResult(
      {
        ...textResult('a'.repeat(60)),
        content: [...textResult('a'.repeat(60)).content, { type: 'text', text: 'b'.repeat(60) }],
      },
      100,
    );
    expect(result.content.map((block) => block.text.slice(0, 3))).toEqual(['aaa', 'bbb', '[To']);
    expect(bytes(result.content[0]?.text ?? '') + bytes(result.content[1]?.text ?? '')).toBe(100);
    expect(result.content.at(-1)?.text).toBe(
      '[Tool result truncated: it had 120 bytes and only the first 100 are shown. Ask for a narrower result if you need the rest.]',
    );
  });

  it('never splits a multi-byte character', () => {
    const [kept] = limitToolResult(textResult('é'.repeat(10)), 5).content;
    expect(kept?.text).toBe('éé');
  });

  it('replaces oversized details with their size, keeping text that fits', () => {
    const result = limitToolResult(textResult('fine', { blob: 'x'.repeat(500) }), 100);
    expect(result.content).toEqual([{ type: 'text', text: 'fine' }]);
    expect(result.details).toEqual({
      truncated: true,
      originalBytes: bytes(JSON.stringify({ blob: 'x'.repeat(500) })),
    });
  });
});
