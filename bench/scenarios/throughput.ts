import type { AgentClient, Conversation, StartConversationOptions } from '../../src/client/client.ts';
import { processCpuMs } from '../machine.ts';
import { MB, type Summary, summarize } from '../stats.ts';
import type { WorkerHandle } from '../workerHandle.ts';
import { sendOk } from './overhead.ts';

export interface ThroughputLevel {
  conversations: number;
  turnsPerSecond: Summary;
  /** Worker resident memory at the end of each run, MB. */
  workerRssMb: Summary;
  /** Median client-side turn latency per run, ms. */
  turnMs: Summary;
  /** CPU time per completed turn, ms, by process (Linux /proc). */
  cpuMsPerTurn: { server: Summary; worker: Summary; driver: Summary };
}

/** The processes whose CPU time a throughput run reads. */
export interface ThroughputProcesses {
  serverPid: number;
  workerPid: number;
}

export interface ThroughputResult {
  runs: number;
  seconds: number;
  idleWorkerRssMb: number;
  levels: ThroughputLevel[];
  /** The highest level again, its conversations started with `liveSearchAttributes: false` (runs before 2026-12-04 lack it). */
  withoutLiveSearchAttributes?: ThroughputLevel;
  /**
   * The highest level again with `modelPolicy: { localActivity: true }`: with live search attributes,
   * and without them (runs before 2026-12-05 19:45 UTC lack it).
   */
  localModelCalls?: { live: ThroughputLevel; quiet: ThroughputLevel };
}

/** How a throughput run's conversations start, beyond the empty system prompt. */
type ConversationStart = Pick<StartConversationOptions, 'liveSearchAttributes' | 'modelPolicy'>;

/**
 * (e) `n` conversations each sending text turns back to back for `seconds`; completed turns per
 * second, and the worker's memory when the run ends. The highest level runs again with
 * conversations that keep no live search attributes, and with model calls as local activities, with
 * and without them.
 */
export async function measureThroughput(
  agents: AgentClient,
  worker: WorkerHandle,
  levels: number[],
  runs: number,
  seconds: number,
  processes: ThroughputProcesses,
): Promise<ThroughputResult> {
  const idleWorkerRssMb = (await worker.memory()).rss / MB;
  const measure = async (n: number, start: ConversationStart): Promise<ThroughputLevel> => {
    const rates: number[] = [];
    const rss: number[] = [];
    const latencies: number[] = [];
    const cpu = { server: [] as number[], worker: [] as number[], driver: [] as number[] };
    for (let run = 0; run < runs; run++) {
      const conversations = await startWarm(agents, n, 50, start);
      const perTurn: number[] = [];
      const cpuBefore = {
        server: processCpuMs(processes.serverPid),
        worker: processCpuMs(processes.workerPid),
        driver: processCpuMs(process.pid),
      };
      const begin = performance.now();
      const deadline = begin + seconds * 1000;
      let turns = 0;
      await Promise.all(
        conversations.map(async (conversation) => {
          while (performance.now() < deadline) {
            const sent = performance.now();
            await sendOk(conversation, 'hello');
            const done = performance.now();
            if (done <= deadline) {
              turns += 1;
              perTurn.push(done - sent);
            }
          }
        }),
      );
      cpu.server.push((processCpuMs(processes.serverPid) - cpuBefore.server) / turns);
      cpu.worker.push((processCpuMs(processes.workerPid) - cpuBefore.worker) / turns);
      cpu.driver.push((processCpuMs(process.pid) - cpuBefore.driver) / turns);
      rates.push(turns / seconds);
      latencies.push(summarize(perTurn).median);
      rss.push((await worker.memory()).rss / MB);
      await Promise.all(conversations.map((conversation) => conversation.end()));
    }
    return {
      conversations: n,
      turnsPerSecond: summarize(rates),
      workerRssMb: summarize(rss),
      turnMs: summarize(latencies),
      cpuMsPerTurn: {
        server: summarize(cpu.server),
        worker: summarize(cpu.worker),
        driver: summarize(cpu.driver),
      },
    };
  };
  const results: ThroughputLevel[] = [];
  for (const n of levels) results.push(await measure(n, {}));
  const most = Math.max(...levels);
  return {
    runs,
    seconds,
    idleWorkerRssMb,
    levels: results,
    withoutLiveSearchAttributes: await measure(most, { liveSearchAttributes: false }),
    localModelCalls: {
      live: await measure(most, { modelPolicy: { localActivity: true } }),
      quiet: await measure(most, { modelPolicy: { localActivity: true }, liveSearchAttributes: false }),
    },
  };
}

/** Starts `n` conversations and runs one turn in each, so the measured window starts warm. */
export async function startWarm(
  agents: AgentClient,
  n: number,
  concurrency = 50,
  start: ConversationStart = {},
): Promise<Conversation[]> {
  const conversations: Conversation[] = [];
  for (let offset = 0; offset < n; offset += concurrency) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(concurrency, n - offset) }, async () => {
        const conversation = await agents.startConversation({ systemPrompt: '', ...start });
        await sendOk(conversation, 'hello');
        return conversation;
      }),
    );
    conversations.push(...batch);
  }
  return conversations;
}
