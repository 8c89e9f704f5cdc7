import type { AgentClient, Conversation } from '../../src/client.ts';
import { MB } from '../stats.ts';
import type { WorkerHandle } from '../workerHandle.ts';
import { startWarm } from './throughput.ts';

export interface IdleMemoryResult {
  conversations: number;
  /** Conversations open at the first reading; the slope is taken between the two readings. */
  firstConversations: number;
  freshRssMb: number;
  firstRssMb: number;
  afterRssMb: number;
  firstHeapMb: number;
  afterHeapMb: number;
  /** RSS growth per 1,000 idle conversations between the two readings, MB. */
  perThousandRssMb: number;
  perThousandHeapMb: number;
  /** Linear extrapolation: RSS at the last reading plus the slope for the remaining conversations. */
  extrapolatedTenThousandMb: number;
  seconds: number;
}

/**
 * (e) Memory per idle open conversation: conversations each with one finished turn (so each is in the
 * worker's workflow cache and its context in the model-context cache), left open. RSS is read after a
 * forced GC at `n / 5` and at `n` conversations; the slope between the two readings excludes the
 * worker's one-time costs (the workflow sandbox, JIT, connection buffers) paid by the first ones.
 */
export async function measureIdleMemory(
  agents: AgentClient,
  worker: WorkerHandle,
  n: number,
): Promise<IdleMemoryResult> {
  const fresh = await worker.memory();
  const start = performance.now();
  const firstCount = Math.floor(n / 5);
  const conversations: Conversation[] = await startWarm(agents, firstCount);
  const first = await worker.memory();
  conversations.push(...(await startWarm(agents, n - firstCount)));
  const seconds = (performance.now() - start) / 1000;
  const after = await worker.memory();
  for (let offset = 0; offset < conversations.length; offset += 100) {
    await Promise.all(conversations.slice(offset, offset + 100).map((conversation) => conversation.end()));
  }
  const added = n - firstCount;
  const perThousandRssMb = ((after.rss - first.rss) / MB / added) * 1000;
  return {
    conversations: n,
    firstConversations: firstCount,
    freshRssMb: fresh.rss / MB,
    firstRssMb: first.rss / MB,
    afterRssMb: after.rss / MB,
    firstHeapMb: first.heapUsed / MB,
    afterHeapMb: after.heapUsed / MB,
    perThousandRssMb,
    perThousandHeapMb: ((after.heapUsed - first.heapUsed) / MB / added) * 1000,
    extrapolatedTenThousandMb: after.rss / MB + (perThousandRssMb * (10_000 - n)) / 1000,
    seconds,
  };
}
