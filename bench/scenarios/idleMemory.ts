import type { AgentClient, Conversation } from '../../src/client/client.ts';
import { MB, timed } from '../stats.ts';
import type { WorkerHandle } from '../workerHandle.ts';
import { sendOk } from './overhead.ts';
import { startWarm } from './throughput.ts';

export interface IdleMemoryResult {
  conversations: number;
  /** Conversations open at the first reading; the slope is taken between the two readings. */
  firstConversations: number;
  freshRssMb: number;
  /** How many workflows the worker's cache holds. */
  maxCachedWorkflows: number;
  firstRssMb: number;
  afterRssMb: number;
  firstHeapMb: number;
  afterHeapMb: number;
  /** RSS growth per 1,000 idle conversations between the two readings, MB. */
  perThousandRssMb: number;
  perThousandHeapMb: number;
  /** Linear extrapolation to 10,000 when fewer were started (`--quick`): RSS at the last reading plus the slope. */
  extrapolatedTenThousandMb: number;
  seconds: number;
  /** A turn of the first conversation started, after all the others (evicted from the workflow cache when there are more than it holds). */
  oldestTurnMs: number;
  /** A turn of the last conversation started (still cached). */
  newestTurnMs: number;
}

/**
 * (e) Memory per idle open conversation: conversations each with one finished turn, left open. The
 * worker keeps as many as its workflow cache holds (and their contexts in the model-context cache);
 * older ones are evicted and replayed on their next message, which the two timed turns show. RSS is read after a
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
  const oldest = conversations[0] as Conversation;
  const newest = conversations.at(-1) as Conversation;
  const oldestTurn = await timed(() => sendOk(oldest, 'hello again'));
  const newestTurn = await timed(() => sendOk(newest, 'hello again'));
  for (let offset = 0; offset < conversations.length; offset += 100) {
    await Promise.all(conversations.slice(offset, offset + 100).map((conversation) => conversation.end()));
  }
  const added = n - firstCount;
  const perThousandRssMb = ((after.rss - first.rss) / MB / added) * 1000;
  return {
    conversations: n,
    firstConversations: firstCount,
    freshRssMb: fresh.rss / MB,
    maxCachedWorkflows: after.maxCachedWorkflows,
    firstRssMb: first.rss / MB,
    afterRssMb: after.rss / MB,
    firstHeapMb: first.heapUsed / MB,
    afterHeapMb: after.heapUsed / MB,
    perThousandRssMb,
    perThousandHeapMb: ((after.heapUsed - first.heapUsed) / MB / added) * 1000,
    extrapolatedTenThousandMb: after.rss / MB + (perThousandRssMb * Math.max(0, 10_000 - n)) / 1000,
    seconds,
    oldestTurnMs: oldestTurn.ms,
    newestTurnMs: newestTurn.ms,
  };
}
