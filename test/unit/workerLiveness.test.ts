import { describe, expect, it } from 'vitest';
import { POLLER_GONE_MS } from '../../src/infrastructure/taskQueuePollers.ts';
import { pollerGone, pollerStates, workerBeats } from '../../src/infrastructure/workerLiveness.ts';

const at = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 });
const RUNNING = 1;
const SHUTDOWN = 3;

describe('whether a worker polling a queue has stopped', () => {
  const now = Date.now();
  const poller = { identity: 'w', lastPollMs: now - 1_000 };

  it('by its heartbeats when the server keeps them: shut down, or a few missed', () => {
    expect(pollerGone(poller, { stopped: true, beatMs: now - 100, intervalMs: 5_000 }, now)).toBe(true);
    expect(pollerGone(poller, { stopped: false, beatMs: now - 16_000, intervalMs: 5_000 }, now)).toBe(true);
    expect(pollerGone(poller, { stopped: false, beatMs: now - 9_000, intervalMs: 5_000 }, now)).toBe(false);
  });

  it('by its last poll without them', () => {
    expect(pollerGone(poller, undefined, now)).toBe(false);
    expect(pollerGone({ ...poller, lastPollMs: now - POLLER_GONE_MS - 1_000 }, undefined, now)).toBe(true);
  });

  it("takes each identity's latest heartbeat, and a first one (no interval yet) at the SDK's minute", async () => {
    const service = {
      listWorkers: async (request: { query: string }) => {
        expect(request.query).toBe('TaskQueue = "q \\"1\\""');
        return {
          workersInfo: [
            { workerHeartbeat: { workerIdentity: 'w', status: SHUTDOWN, heartbeatTime: at(now - 30_000) } },
            {
              workerHeartbeat: {
                workerIdentity: 'w',
                status: RUNNING,
                heartbeatTime: at(now - 20_000),
                elapsedSinceLastHeartbeat: { seconds: '5', nanos: 0 },
              },
            },
            {
              workerHeartbeat: { workerIdentity: 'fresh', status: RUNNING, heartbeatTime: at(now - 20_000) },
            },
          ],
        };
      },
    };
    const beats = await workerBeats(service, 'default', 'q "1"');
    expect(beats?.get('w')).toEqual({ stopped: false, beatMs: now - 20_000, intervalMs: 5_000 });
    expect(beats?.get('fresh')).toEqual({ stopped: false, beatMs: now - 20_000, intervalMs: 60_000 });
  });

  it('falls back to the last poll when the server has no ListWorkers or refuses it', async () => {
    const describeTaskQueue = async () => ({
      pollers: [{ identity: 'w', lastAccessTime: at(now - 80_000) }],
    });
    const refusing = {
      describeTaskQueue,
      listWorkers: async () => {
        throw new Error('unimplemented');
      },
    };
    expect(await workerBeats(refusing, 'default', 'q')).toBeUndefined();
    expect(await pollerStates(refusing, 'default', 'q', 1, { now })).toEqual([
      { identity: 'w', lastPollMs: now - 80_000, gone: true },
    ]);
    expect(await pollerStates({ describeTaskQueue }, 'default', 'q', 1, { now: now - 20_000 })).toEqual([
      { identity: 'w', lastPollMs: now - 80_000, gone: false },
    ]);
  });
});
