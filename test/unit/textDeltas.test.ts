import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TextDeltaBatcher } from '../../activities/textDeltas.ts';
import { MAX_TEXT_DELTA_EVENT_CHARS } from '../../src/contract/limits.ts';

describe('streamed text, batched into events', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A token every 50 ms for 1 s: the events the batcher hands on, with when. */
  const stream = (onLiveChannel: () => boolean) => {
    const handed: { text: string; streaming: boolean; at: number }[] = [];
    const batcher = new TextDeltaBatcher(
      (text, streaming) => handed.push({ text, streaming, at: Date.now() }),
      onLiveChannel,
    );
    const start = Date.now();
    for (let token = 0; token < 20; token++) {
      batcher.add(`t${token} `);
      vi.advanceTimersByTime(50);
    }
    batcher.flush();
    return handed.map((event) => ({ ...event, at: event.at - start }));
  };

  it('hands text on every 200 ms when a batch may be a signal, all of it once', () => {
    const handed = stream(() => false);
    expect(handed.map(({ at }) => at)).toEqual([200, 400, 600, 800, 1000]);
    expect(handed.every(({ streaming }) => streaming)).toBe(true);
    expect(handed.map(({ text }) => text).join('')).toBe(
      Array.from({ length: 20 }, (_, token) => `t${token} `).join(''),
    );
  });

  it('hands text on at once when a fast stream gathers the most an event holds', () => {
    const handed: string[] = [];
    const batcher = new TextDeltaBatcher((text) => handed.push(text));
    // 300 K characters in 8-character deltas within one interval: no waiting for its end.
    for (let delta = 0; delta < 300_000 / 8; delta++) batcher.add('abcdefgh');
    expect(handed).toHaveLength(Math.floor(300_000 / MAX_TEXT_DELTA_EVENT_CHARS));
    expect(handed.every((text) => text.length === MAX_TEXT_DELTA_EVENT_CHARS)).toBe(true);
    batcher.flush();
    expect(handed.join('')).toBe('abcdefgh'.repeat(300_000 / 8));
  });

  it('hands text on every 100 ms while followers read it on the live channel', () => {
    const handed = stream(() => true);
    expect(handed.map(({ at }) => at)).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
  });
});
