import { describe, expect, it } from 'vitest';
import { resolveModelTable } from '../../activities/models/models.ts';
import { type TokenReservation, tokenWait, withinWindow } from '../../src/contract/tokenLimiter.ts';

const WINDOW = 60_000;
const at = (ms: number, tokens: number, id = `call-${ms}`): TokenReservation => ({ id, at: ms, tokens });

describe('the token window', () => {
  it('lets a call through at once while the window has room for it', () => {
    expect(tokenWait([], 100, 0, 100, WINDOW)).toBe(0);
    expect(tokenWait([at(0, 60)], 40, 1_000, 100, WINDOW)).toBe(0);
  });

  it('waits until enough of the oldest reservations have left the window', () => {
    const window = [at(0, 50), at(10_000, 30), at(20_000, 20)];
    // 100 used: 40 more needs the first (50) gone, at 60 000.
    expect(tokenWait(window, 40, 30_000, 100, WINDOW)).toBe(30_000);
    // 60 more needs the first two (80) gone, at 70 000.
    expect(tokenWait(window, 60, 30_000, 100, WINDOW)).toBe(40_000);
  });

  it('forgets reservations older than the window', () => {
    const window = [at(0, 100), at(50_000, 10)];
    expect(withinWindow(window, 60_000, WINDOW)).toEqual([at(50_000, 10)]);
    expect(tokenWait(window, 90, 60_000, 100, WINDOW)).toBe(0);
  });
});

describe('rateLimit.tokensPerMinute', () => {
  it('must be a number above 0', () => {
    const models = (tokensPerMinute: number) => ({
      models: {
        m: { baseURL: 'http://127.0.0.1:1/v1', rateLimit: { requestsPerMinute: 60, tokensPerMinute } },
      },
    });
    expect(() => resolveModelTable(models(0), {})).toThrow(
      'models.m.rateLimit.tokensPerMinute must be a number above 0, got 0',
    );
    expect(resolveModelTable(models(1_000), {}).models.get('m')?.rateLimit?.tokensPerMinute).toBe(1_000);
  });
});
