import { describe, expect, it } from 'vitest';
import { fairnessKeyOf } from '../../src/contract/fairnessKey.ts';
import { MAX_FAIRNESS_KEY_BYTES } from '../../src/contract/limits.ts';
import { utf8Bytes } from '../../src/contract/utf8.ts';

describe('the fairness key of a conversation on a rate-limited model queue', () => {
  it('is the conversation id when the server takes it', () => {
    const id = `conversation-${'a'.repeat(MAX_FAIRNESS_KEY_BYTES - 13)}`;
    expect(fairnessKeyOf(id)).toBe(id);
  });

  it('stays within the limit for a longer id, and tells two long ids apart', () => {
    const long = `eval-run-42-conversation-${'b'.repeat(60)}`;
    const other = `eval-run-43-conversation-${'b'.repeat(60)}`;
    const key = fairnessKeyOf(long);
    expect(utf8Bytes(key)).toBeLessThanOrEqual(MAX_FAIRNESS_KEY_BYTES);
    expect(key.startsWith('eval-run-42-conversation-')).toBe(true);
    expect(fairnessKeyOf(other)).not.toBe(key);
    expect(fairnessKeyOf(long)).toBe(key);
    expect(utf8Bytes(fairnessKeyOf('é'.repeat(80)))).toBeLessThanOrEqual(MAX_FAIRNESS_KEY_BYTES);
  });
});
