import type { Context } from '@temporalio/activity';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { heartbeatWhileRunning } from '../../activities/heartbeat.ts';

function fakeContext(heartbeatTimeoutMs: number | undefined) {
  const beats: unknown[] = [];
  const context = { info: { heartbeatTimeoutMs }, heartbeat: (details: unknown) => beats.push(details) };
  return { context: context as unknown as Context, beats };
}

describe('heartbeats of a running activity (each one that reaches the server is a billed Action)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends none for a call shorter than half its heartbeat timeout, whatever progress it reports', () => {
    vi.useFakeTimers();
    const { context, beats } = fakeContext(30_000);
    let progress = 0;
    const stop = heartbeatWhileRunning(context, () => ({ progress }));
    for (let step = 0; step < 140; step++) {
      progress = step;
      vi.advanceTimersByTime(100);
    }
    stop();
    vi.advanceTimersByTime(60_000);
    expect(beats).toEqual([]);
  });

  it('beats every half timeout while it runs, carrying the latest progress', () => {
    vi.useFakeTimers();
    const { context, beats } = fakeContext(30_000);
    let progress = 0;
    const stop = heartbeatWhileRunning(context, () => ({ progress }));
    for (let step = 1; step <= 600; step++) {
      progress = step;
      vi.advanceTimersByTime(100);
    }
    stop();
    expect(beats).toEqual([{ progress: 150 }, { progress: 300 }, { progress: 450 }, { progress: 600 }]);
  });

  it('keeps a third of a short timeout for the first beat, and beats a long one at least once a minute', () => {
    vi.useFakeTimers();
    const short = fakeContext(1_000);
    const stopShort = heartbeatWhileRunning(short.context);
    vi.advanceTimersByTime(333);
    expect(short.beats).toHaveLength(1);
    stopShort();
    const long = fakeContext(600_000);
    const stopLong = heartbeatWhileRunning(long.context);
    vi.advanceTimersByTime(180_000);
    expect(long.beats).toHaveLength(3);
    stopLong();
  });

  it('sends nothing for an activity without a heartbeat timeout', () => {
    vi.useFakeTimers();
    const { context, beats } = fakeContext(undefined);
    const stop = heartbeatWhileRunning(context);
    vi.advanceTimersByTime(120_000);
    stop();
    expect(beats).toEqual([]);
  });
});
