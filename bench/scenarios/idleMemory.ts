import type { AgentClient } from '../../src/client.ts';
import { MB } from '../stats.ts';
import type { WorkerHandle } from '../workerHandle.ts';
import { startWarm } from './throughput.ts';

export interface IdleMemoryResult {
  conversations: number;
  beforeRssMb: number;
  afterRssMb: number;
  beforeHeapMb: number;
  afterHeapMb: number;
  /** RSS growth per 1,000 idle conversations, MB. */
  perThousandRssMb: number;
  perThousandHeapMb: number;
  /** Linear extrapolation: idle worker RSS plus ten times the growth per 1,000. */
  extrapolatedTenThousandMb: number;
  seconds: number;
}

/**
 * (e) Memory per idle open conversation: `n` conversations each with one finished turn (so each is in
 * the worker's workflow cache and its context in the model-context cache), then left open. Measured
 * after a forced GC in the worker process.
 */
export async function measureIdleMemory(
  agents: AgentClient,
  worker: WorkerHandle,
  n: number,
): Promise<IdleMemoryResult> {
  const before = await worker.memory();
  const start = performance.now();
  const conversations = await startWarm(agents, n);
  const seconds = (performance.now() - start) / 1000;
  const after = await worker.memory();
  for (let offset = 0; offset < conversations.length; offset += 100) {
    await Promise.all(conversations.slice(offset, offset + 100).map((conversation) => conversation.end()));
  }
  const perThousandRssMb = ((after.rss - before.rss) / MB / n) * 1000;
  return {
    conversations: n,
    beforeRssMb: before.rss / MB,
    afterRssMb: after.rss / MB,
    beforeHeapMb: before.heapUsed / MB,
    afterHeapMb: after.heapUsed / MB,
    perThousandRssMb,
    perThousandHeapMb: ((after.heapUsed - before.heapUsed) / MB / n) * 1000,
    extrapolatedTenThousandMb: before.rss / MB + perThousandRssMb * 10,
    seconds,
  };
}
