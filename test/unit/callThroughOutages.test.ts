import { describe, expect, it } from 'vitest';
import { callThroughOutages } from '../../src/client/reachability.ts';

const refused = () =>
  Object.assign(new Error('No connection established. Last error: connect ECONNREFUSED'), { code: 14 });

describe('callThroughOutages', () => {
  it('tries a call again while Temporal cannot be reached, and says when it is down and back', async () => {
    const said: string[] = [];
    let tries = 0;
    const result = await callThroughOutages(
      async () => {
        tries += 1;
        if (tries < 3) throw refused();
        return 42;
      },
      { onUnreachable: () => said.push('down'), onReconnected: () => said.push('back') },
    );
    expect(result).toBe(42);
    expect(tries).toBe(3);
    expect(said).toEqual(['down', 'down', 'back']);
  });

  it('throws an outage without reconnect options, and anything that is not an outage', async () => {
    await expect(callThroughOutages(() => Promise.reject(refused()), undefined)).rejects.toThrow(
      /ECONNREFUSED/,
    );
    await expect(
      callThroughOutages(() => Promise.reject(new Error('workflow not found')), { onUnreachable() {} }),
    ).rejects.toThrow('workflow not found');
  });

  it('gives up when the signal aborts during an outage', async () => {
    const stop = new AbortController();
    const pending = callThroughOutages(
      () => Promise.reject(refused()),
      { onUnreachable: () => stop.abort() },
      stop.signal,
    );
    await expect(pending).resolves.toBeUndefined();
  });
});
