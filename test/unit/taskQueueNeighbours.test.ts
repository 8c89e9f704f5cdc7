import { describe, expect, it } from 'vitest';
import {
  identityWithSignature,
  signatureOf,
  TaskQueueNeighbours,
  toolSetHash,
  workerSignature,
} from '../../activities/taskQueueNeighbours.ts';
import type { TaskQueueService } from '../../src/infrastructure/taskQueuePollers.ts';
import type { WorkerListService } from '../../src/infrastructure/workerLiveness.ts';

const DEMO_MODEL = 'model yiem-demo at http://127.0.0.1:4000/v1';
const USERS_MODEL = 'model gpt-4o-mini at https://api.openai.com/v1';
const demo = workerSignature(DEMO_MODEL, ['getTime', 'getWeather']);
const users = workerSignature(USERS_MODEL, ['lookup']);

/** A queue whose pollers are the given identities, seen `agoMs` before now. */
function queueOf(pollers: { identity: string; agoMs?: number }[]): TaskQueueService {
  return {
    describeTaskQueue: async () => ({
      pollers: pollers.map(({ identity, agoMs = 0 }) => ({
        identity,
        lastAccessTime: { seconds: String(Math.floor((Date.now() - agoMs) / 1000)), nanos: 0 },
      })),
    }),
  };
}

describe('worker signatures in identities', () => {
  it('round-trips the model and the tool hash, and leaves a worker without model calls without a model', () => {
    expect(signatureOf(identityWithSignature('1@host', demo))).toEqual(demo);
    expect(signatureOf(identityWithSignature('1@host', { tools: demo.tools }))).toEqual({
      tools: demo.tools,
    });
    expect(signatureOf('1@host')).toBeUndefined();
  });

  it('stays short, since Temporal writes the identity into most history events', () => {
    expect(identityWithSignature('1@host', demo, true)).toMatch(
      /^1@host yiem\(m[0-9a-f]{8} t[0-9a-f]{8} L\)$/,
    );
  });

  it("reads an earlier release's identity, so that a rolling upgrade compares old and new workers", () => {
    const old = `1@host codec(none) payloads(0123456789abcdef /data) yiem(${DEMO_MODEL}, tools ${demo.tools}, live)`;
    expect(signatureOf(old)).toEqual(demo);
  });

  it('hashes tool names whatever their order', () => {
    expect(toolSetHash(['b', 'a'])).toBe(toolSetHash(['a', 'b']));
    expect(toolSetHash(['a'])).not.toBe(toolSetHash(['a', 'b']));
  });
});

describe('TaskQueueNeighbours', () => {
  const own = identityWithSignature('1@host', users);
  const other = identityWithSignature('2@host', demo);

  it('refuses model calls while another worker of the queue calls another model, and logs it once', async () => {
    const logged: string[] = [];
    const neighbours = new TaskQueueNeighbours((line) => logged.push(line));
    neighbours.bind(own, users, USERS_MODEL);
    const queue = queueOf([{ identity: own }, { identity: other }]);
    const conflict = await neighbours.modelConflict(queue, 'default', 'yiem-agent');
    expect(conflict).toContain(
      `Worker ${own} (${USERS_MODEL}) shares task queue "yiem-agent" with worker ${other}`,
    );
    await neighbours.modelConflict(queue, 'default', 'yiem-agent');
    expect(logged).toEqual([expect.stringContaining(`another model: ${other}`)]);
  });

  it('only logs a worker with the same model and other tools', async () => {
    const logged: string[] = [];
    const neighbours = new TaskQueueNeighbours((line) => logged.push(line));
    neighbours.bind(own, users);
    const sameModel = identityWithSignature('3@host', { model: users.model, tools: demo.tools });
    expect(
      await neighbours.modelConflict(queueOf([{ identity: sameModel }]), 'default', 'q'),
    ).toBeUndefined();
    expect(logged).toEqual([expect.stringContaining(`another set of tools: ${sameModel}`)]);
  });

  it('ignores workers that serve the same, workers long gone, and pollers that are not yiem workers', async () => {
    const logged: string[] = [];
    const neighbours = new TaskQueueNeighbours((line) => logged.push(line));
    neighbours.bind(own, users);
    const twin = identityWithSignature('4@host', users);
    const queue = queueOf([
      { identity: twin },
      { identity: other, agoMs: 5 * 60_000 },
      { identity: '5@host' },
    ]);
    expect(await neighbours.modelConflict(queue, 'default', 'q')).toBeUndefined();
    expect(logged).toEqual([]);
  });

  describe('a worker of another model that may have stopped', () => {
    // Seconds for minutes: alive within 1 s, gone after 3 s, looked at every 100 ms.
    const timing = { aliveMs: 1_000, goneMs: 3_000, lookAgainMs: 100 };
    /** A queue whose other worker began its last poll at `lastPoll()` (seconds, as the server keeps it). */
    function queueWith(lastPoll: () => number): TaskQueueService {
      return {
        describeTaskQueue: async () => ({
          pollers: [
            { identity: own, lastAccessTime: { seconds: String(Math.floor(Date.now() / 1000)), nanos: 0 } },
            { identity: other, lastAccessTime: { seconds: String(Math.floor(lastPoll() / 1000)), nanos: 0 } },
          ],
        }),
      };
    }

    it('serves once its last poll grows older than a long poll, and at once afterwards', async () => {
      const neighbours = new TaskQueueNeighbours(() => {}, timing);
      neighbours.bind(own, users);
      const stoppedAt = Date.now() - 2_000;
      const queue = queueWith(() => stoppedAt);
      expect(await neighbours.modelConflict(queue, 'default', 'q')).toBeUndefined();
      const began = Date.now();
      expect(await neighbours.modelConflict(queue, 'default', 'q')).toBeUndefined();
      // Judged once: the next call does not wait for it again.
      expect(Date.now() - began).toBeLessThan(timing.goneMs);
    });

    it('refuses once it polls again: it runs', async () => {
      const neighbours = new TaskQueueNeighbours(() => {}, timing);
      neighbours.bind(own, users);
      let lastPoll = Date.now() - 2_000;
      const queue = queueWith(() => lastPoll);
      setTimeout(() => {
        lastPoll = Date.now();
      }, 300);
      expect(await neighbours.modelConflict(queue, 'default', 'q')).toContain(`with worker ${other}`);
    });
  });

  describe('a worker of another model, told by its heartbeats', () => {
    const seconds = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 });
    /** A queue whose other worker polled a second ago and sends heartbeats as `beat()` says. */
    function queueWithBeats(
      beat: () => { status: number; ms: number },
    ): TaskQueueService & WorkerListService {
      return {
        describeTaskQueue: async () => ({
          pollers: [
            { identity: own, lastAccessTime: seconds(Date.now()) },
            { identity: other, lastAccessTime: seconds(Date.now() - 1_000) },
          ],
        }),
        listWorkers: async () => ({
          workersInfo: [
            {
              workerHeartbeat: {
                workerIdentity: other,
                status: beat().status,
                heartbeatTime: seconds(beat().ms),
                elapsedSinceLastHeartbeat: { seconds: '1', nanos: 0 },
              },
            },
          ],
        }),
      };
    }
    const running = 1;
    const shuttingDown = 2;

    it('serves at once, and says nothing of it, once it said it shut down', async () => {
      const logged: string[] = [];
      const neighbours = new TaskQueueNeighbours((line) => logged.push(line));
      neighbours.bind(own, users);
      const queue = queueWithBeats(() => ({ status: shuttingDown, ms: Date.now() - 500 }));
      expect(await neighbours.modelConflict(queue, 'default', 'q')).toBeUndefined();
      expect(logged).toEqual([]);
    });

    it('serves at once once it missed its heartbeats (SIGKILLed), though its last poll is recent', async () => {
      const neighbours = new TaskQueueNeighbours(() => {});
      neighbours.bind(own, users);
      const queue = queueWithBeats(() => ({ status: running, ms: Date.now() - 4_000 }));
      expect(await neighbours.modelConflict(queue, 'default', 'q')).toBeUndefined();
    });

    it('refuses once it sends another heartbeat, though it has not polled again: it runs', async () => {
      const neighbours = new TaskQueueNeighbours(() => {}, { aliveMs: 0, goneMs: 60_000, lookAgainMs: 100 });
      neighbours.bind(own, users);
      let beatMs = Date.now() - 1_500;
      const queue = queueWithBeats(() => ({ status: running, ms: beatMs }));
      setTimeout(() => {
        beatMs = Date.now();
      }, 300);
      expect(await neighbours.modelConflict(queue, 'default', 'q')).toContain(`with worker ${other}`);
    });
  });
});
