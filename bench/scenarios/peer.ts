import type { WorkflowHandle } from '@temporalio/client';
import type { AgentClient, Conversation } from '../../src/client/client.ts';
import { type ActionCounts, actionsBetween, readActions, totalActions } from '../actions.ts';
import type { BenchEnvironment } from '../environment.ts';
import { encodedBytes, lastToolBatch, storedHistory } from '../history.ts';
import { processCpuMs } from '../machine.ts';
import { type Peer, type PeerChat, startPeer } from '../peer/worker.ts';
import { callDirective } from '../scriptedReplies.ts';
import { MB, type Summary, summarize, timed } from '../stats.ts';
import { noopLocalTool, SLOW_TOOL_MS, slowLocalTool } from '../tools.ts';
import type { WorkerHandle } from '../workerHandle.ts';
import { paddedText } from './historyBytes.ts';
import { OVERHEAD_TOOL_CALLS, perCallMs, type RunTimes, sendOk } from './overhead.ts';
import { PARALLEL_TOOLS } from './parallel.ts';
import { startWarm } from './throughput.ts';

/** Text turns per CPU reading: /proc counts CPU time in 10 ms ticks, so one turn is too few. */
const CPU_TURNS = 20;
/** Conversations started at once when filling a worker with idle ones. */
const IDLE_BATCH = 10;

/**
 * A batch of the peer's idle chats that takes longer stops its filling: past about 600 chats on two
 * cores its workflow tasks take over 5 s each and start to fail, and a stalled batch would hold the
 * whole run.
 */
const PEER_BATCH_TIMEOUT_MS = 120_000;

/** The peer's memory is read every this many idle chats: its worker may die before the last. */
const PEER_MEMORY_EVERY = 100;

/** One figure measured on both sides in the same run. */
export interface SideBySide<T> {
  ours: T;
  peer: T;
}

export interface HistoryGrowth {
  /** The turn measured: what the history grew by during this text turn. */
  turn: number;
  events: SideBySide<number>;
  bytes: SideBySide<number>;
}

/** Ours with the tools declared `localActivity`, beside the peer's tools as activities. */
export interface LocalToolsSide {
  perToolMs: Summary;
  parallelEfficiency: Summary;
  /** Ours over the peer's, run by run. */
  ratios: { perToolMs: Summary; parallelEfficiency: Summary };
}

/**
 * Ours with `modelPolicy: { localActivity: true }`, beside the peer's model call as a local activity
 * (`useLocalActivity`): both sides' like-for-like configuration, on the sequential chats.
 */
export interface LocalModelCallsSide {
  plainTurnMs: Summary;
  cpuMsPerTextTurn: { server: Summary; worker: Summary };
  /** Ours over the peer's local-activity configuration, run by run. */
  ratios: { plainTurnMs: Summary; cpuMsPerTextTurn: Summary };
}

export interface PeerResult {
  runs: number;
  perToolMs: SideBySide<Summary>;
  /** Absent in runs recorded before it. */
  oursLocalActivity?: LocalToolsSide;
  /** Absent in runs recorded before 2026-12-05 19:45 UTC. */
  oursLocalModelCalls?: LocalModelCallsSide;
  /**
   * `peer` with its model call as a regular activity (the plugin's default), `peerLocalActivity` as a
   * local activity (`useLocalActivity`), each chat after the same turns.
   */
  plainTurnMs: SideBySide<Summary> & { peerLocalActivity: Summary };
  /** 8 × 200 ms in parallel: 200 ms over the batch's wall time. */
  parallelEfficiency: SideBySide<Summary>;
  /**
   * Ours over the peer's, run by run: the sides alternate, so each run's two figures were measured
   * moments apart on the same machine.
   */
  ratios: {
    perToolMs: Summary;
    plainTurnMs: Summary;
    /** Ours over the peer's local-activity configuration. */
    plainTurnMsOverLocalActivity: Summary;
    parallelEfficiency: Summary;
  };
  /**
   * Server and worker CPU time per plain text turn (from /proc), on the sequential chats, the sides
   * alternating; `peerLocalActivity` as in `plainTurnMs`.
   */
  cpuMsPerTextTurn: {
    turnsPerReading: number;
    server: SideBySide<Summary> & { peerLocalActivity: Summary };
    worker: SideBySide<Summary> & { peerLocalActivity: Summary };
    /** Server plus worker, ours over the peer's, run by run. */
    ratio: Summary;
    ratioOverLocalActivity: Summary;
  };
  /** Each side's worker, fresh and then holding `conversations` open ones with one finished turn each. */
  idleMemory: {
    /** Asked for on both sides; `reached` says how many each worker held when its memory was read. */
    conversations: number;
    reached: SideBySide<number>;
    /** Why the peer stopped short of `conversations`. */
    peerStoppedBy?: string;
    freshRssMb: SideBySide<number>;
    rssMb: SideBySide<number>;
    heapMb: SideBySide<number>;
    maxCachedWorkflows: SideBySide<number>;
  };
  history: HistoryGrowth[];
  /**
   * The same with 2,000-byte messages, ours against the peer with its model call as a
   * local activity (`peer` here); absent in runs before it.
   */
  historyAgainstLocal?: HistoryGrowth[];
  /** As `historyAgainstLocal`, ours started with `modelPolicy: { localActivity: true }`. */
  historyLocalAgainstLocal?: HistoryGrowth[];
  /** Per text turn and per turn with two tool calls; absent without the server's metrics. */
  actions?: { textTurn: SideBySide<number>; toolTurn: SideBySide<number> };
}

/** The same chat operations on ours and on the peer. */
interface Side {
  send(text: string): Promise<void>;
  handle: WorkflowHandle;
  end(): Promise<void>;
}

const ourSide = (conversation: Conversation): Side => ({
  send: (text) => sendOk(conversation, text),
  handle: conversation.handle,
  end: async () => {
    await conversation.end();
  },
});

const peerSide = (chat: PeerChat): Side => ({
  send: async (text) => {
    await chat.send(text);
  },
  handle: chat.handle,
  end: () => chat.end(),
});

/** The bench tools declared `localActivity`, by the name of the tool each one copies. */
const LOCAL_TOOLS = { noop: noopLocalTool.name, sleep200: slowLocalTool.name };

const PEER_ACTIVITIES = {
  isModelCall: (type: string) => /model/i.test(type),
  isToolExecution: (type: string) => type === 'noop' || type === 'sleep200',
};

/**
 * (p) Temporal's own agent integration, `@temporalio/openai-agents` 1.23.0 on `@openai/agents-core`
 * 0.11 (bench/peer/), against ours on the same dev server, scripted model and tools, alternating run
 * by run: overhead per sequential tool call, the plain text turn (also against the peer with its model
 * call as a local activity), parallel efficiency, history growth per text turn at turn 1 and at
 * `lateTurn`, and Actions per turn.
 */
export async function measurePeer(
  env: BenchEnvironment,
  ourWorker: { agents: AgentClient; worker: WorkerHandle },
  options: { runs: number; lateTurn: number; idleConversations: number },
): Promise<PeerResult> {
  const { runs, lateTurn } = options;
  const { agents } = ourWorker;
  const peer = await startPeer({ address: env.server.address, modelBaseURL: env.model.baseURL });
  try {
    const sides = async (mode: 'parallel' | 'sequential'): Promise<SideBySide<Side>> => ({
      ours: ourSide(
        await agents.startConversation({ systemPrompt: '', toolExecution: mode, maxModelCallsPerTurn: 50 }),
      ),
      peer: peerSide(await peer.startChat({ parallelToolCalls: mode === 'parallel' })),
    });

    // Each run starts every side afresh: the peer's session travels whole in each of its model
    // calls, so a conversation kept across runs would grow the peer's calls and not ours.
    const startSequential = async () => ({
      ...(await sides('sequential')),
      peerLocalActivity: peerSide(
        await peer.startChat({ parallelToolCalls: false, modelCall: 'localActivity' }),
      ),
      oursLocalTools: ourSide(
        await agents.startConversation({
          systemPrompt: '',
          toolExecution: 'sequential',
          maxModelCallsPerTurn: 50,
        }),
      ),
      oursLocalModelCalls: ourSide(
        await agents.startConversation({
          systemPrompt: '',
          toolExecution: 'sequential',
          maxModelCallsPerTurn: 50,
          modelPolicy: { localActivity: true },
        }),
      ),
    });
    const endAll = async (sideBySide: Record<string, Side>) => {
      for (const side of Object.values(sideBySide)) await side.end();
    };
    const overhead = {
      ours: [] as RunTimes[],
      peer: [] as RunTimes[],
      peerLocalActivity: [] as RunTimes[],
      oursLocalTools: [] as RunTimes[],
      oursLocalModelCalls: [] as RunTimes[],
    };
    for (let run = -2; run < runs; run++) {
      const fresh = await startSequential();
      for (const side of Object.keys(overhead) as (keyof typeof overhead)[]) {
        const tool = side === 'oursLocalTools' ? LOCAL_TOOLS.noop : 'noop';
        const many = await timed(() => fresh[side].send(callDirective(tool, OVERHEAD_TOOL_CALLS)));
        const one = await timed(() => fresh[side].send(callDirective(tool, 1)));
        const plain = await timed(() => fresh[side].send('hello'));
        if (run >= 0) overhead[side].push([many.ms, one.ms, plain.ms]);
      }
      await endAll(fresh);
    }

    // The CPU readings send text turns only, the same number on every side.
    const sequential = await startSequential();
    const pids = {
      ours: ourWorker.worker.child.pid as number,
      peer: peer.worker.child.pid as number,
      peerLocalActivity: peer.worker.child.pid as number,
      oursLocalModelCalls: ourWorker.worker.child.pid as number,
    };
    const cpuSides = ['ours', 'peer', 'peerLocalActivity', 'oursLocalModelCalls'] as const;
    type CpuSide = (typeof cpuSides)[number];
    const perSide = (): Record<CpuSide, number[]> => ({
      ours: [],
      peer: [],
      peerLocalActivity: [],
      oursLocalModelCalls: [],
    });
    const cpu = { server: perSide(), worker: perSide() };
    for (let run = -1; run < runs; run++) {
      for (const side of cpuSides) {
        const before = { server: processCpuMs(env.server.pid), worker: processCpuMs(pids[side]) };
        for (let turn = 0; turn < CPU_TURNS; turn++) await sequential[side].send('hello');
        if (run < 0) continue;
        cpu.server[side].push((processCpuMs(env.server.pid) - before.server) / CPU_TURNS);
        cpu.worker[side].push((processCpuMs(pids[side]) - before.worker) / CPU_TURNS);
      }
    }
    const cpuTotal = (side: CpuSide) =>
      cpu.server[side].map((server, run) => server + (cpu.worker[side][run] ?? Number.NaN));

    const parallel = {
      ...(await sides('parallel')),
      oursLocalTools: ourSide(
        await agents.startConversation({ systemPrompt: '', toolExecution: 'parallel' }),
      ),
    };
    const efficiency = { ours: [] as number[], peer: [] as number[], oursLocalTools: [] as number[] };
    for (let run = -1; run < runs; run++) {
      for (const side of ['ours', 'peer', 'oursLocalTools'] as const) {
        const tool = side === 'oursLocalTools' ? LOCAL_TOOLS.sleep200 : 'sleep200';
        await parallel[side].send(callDirective(tool, PARALLEL_TOOLS));
        const batch = await lastToolBatch(
          parallel[side].handle,
          side === 'peer' ? PEER_ACTIVITIES : undefined,
        );
        if (run >= 0) efficiency[side].push(SLOW_TOOL_MS / batch.batchMs);
      }
    }

    const history = await historyGrowth(await sides('parallel'), [1, lateTurn]);
    const againstLocal = {
      ours: ourSide(await agents.startConversation({ systemPrompt: '' })),
      peer: peerSide(await peer.startChat({ parallelToolCalls: true, modelCall: 'localActivity' })),
    };
    const largeText = (turn: number) => paddedText(`turn ${turn}`);
    const historyAgainstLocal = await historyGrowth(againstLocal, [1, lateTurn], largeText);
    const localAgainstLocal = {
      ours: ourSide(
        await agents.startConversation({ systemPrompt: '', modelPolicy: { localActivity: true } }),
      ),
      peer: peerSide(await peer.startChat({ parallelToolCalls: true, modelCall: 'localActivity' })),
    };
    const historyLocalAgainstLocal = await historyGrowth(localAgainstLocal, [1, lateTurn], largeText);
    const metricsUrl = env.server.metricsUrl;
    const actions = metricsUrl ? await actionsPerTurn(await sides('parallel'), metricsUrl) : undefined;

    await endAll(sequential);
    await endAll(parallel);
    const perTool = (runs: RunTimes[]) => runs.map(([many, one]) => perCallMs(many, one));
    const plainTurn = (runs: RunTimes[]) => runs.map(([, , plain]) => plain);
    const runByRun = (ours: number[], peer: number[]) =>
      summarize(ours.map((value, run) => value / (peer[run] ?? Number.NaN)));
    return {
      runs,
      perToolMs: { ours: summarize(perTool(overhead.ours)), peer: summarize(perTool(overhead.peer)) },
      oursLocalActivity: {
        perToolMs: summarize(perTool(overhead.oursLocalTools)),
        parallelEfficiency: summarize(efficiency.oursLocalTools),
        ratios: {
          perToolMs: runByRun(perTool(overhead.oursLocalTools), perTool(overhead.peer)),
          parallelEfficiency: runByRun(efficiency.oursLocalTools, efficiency.peer),
        },
      },
      oursLocalModelCalls: {
        plainTurnMs: summarize(plainTurn(overhead.oursLocalModelCalls)),
        cpuMsPerTextTurn: {
          server: summarize(cpu.server.oursLocalModelCalls),
          worker: summarize(cpu.worker.oursLocalModelCalls),
        },
        ratios: {
          plainTurnMs: runByRun(
            plainTurn(overhead.oursLocalModelCalls),
            plainTurn(overhead.peerLocalActivity),
          ),
          cpuMsPerTextTurn: runByRun(cpuTotal('oursLocalModelCalls'), cpuTotal('peerLocalActivity')),
        },
      },
      plainTurnMs: {
        ours: summarize(plainTurn(overhead.ours)),
        peer: summarize(plainTurn(overhead.peer)),
        peerLocalActivity: summarize(plainTurn(overhead.peerLocalActivity)),
      },
      parallelEfficiency: { ours: summarize(efficiency.ours), peer: summarize(efficiency.peer) },
      ratios: {
        perToolMs: runByRun(perTool(overhead.ours), perTool(overhead.peer)),
        plainTurnMs: runByRun(plainTurn(overhead.ours), plainTurn(overhead.peer)),
        plainTurnMsOverLocalActivity: runByRun(
          plainTurn(overhead.ours),
          plainTurn(overhead.peerLocalActivity),
        ),
        parallelEfficiency: runByRun(efficiency.ours, efficiency.peer),
      },
      cpuMsPerTextTurn: {
        turnsPerReading: CPU_TURNS,
        server: {
          ours: summarize(cpu.server.ours),
          peer: summarize(cpu.server.peer),
          peerLocalActivity: summarize(cpu.server.peerLocalActivity),
        },
        worker: {
          ours: summarize(cpu.worker.ours),
          peer: summarize(cpu.worker.peer),
          peerLocalActivity: summarize(cpu.worker.peerLocalActivity),
        },
        ratio: runByRun(cpuTotal('ours'), cpuTotal('peer')),
        ratioOverLocalActivity: runByRun(cpuTotal('ours'), cpuTotal('peerLocalActivity')),
      },
      // Last: a peer worker filled to its limit would slow whatever came after it.
      idleMemory: await idleWorkerMemory(ourWorker, peer, options.idleConversations),
      history,
      historyAgainstLocal,
      historyLocalAgainstLocal,
      ...(actions ? { actions } : {}),
    };
  } finally {
    await peer.close();
  }
}

/**
 * Fills each worker with `n` open conversations, each with one finished turn, and reads its memory
 * after a forced GC, fresh and full; one side at a time, so each side's reading is its own. The
 * peer stops at its first failed or stalled batch, and its memory is read with what it holds then.
 * The conversations end afterwards (the peer's are terminated: a struggling worker may never finish
 * them).
 */
async function idleWorkerMemory(
  ours: { agents: AgentClient; worker: WorkerHandle },
  peer: Peer,
  n: number,
): Promise<PeerResult['idleMemory']> {
  const oursFresh = await ours.worker.memory();
  const conversations = await startWarm(ours.agents, n, IDLE_BATCH);
  const oursFull = await ours.worker.memory();
  for (let offset = 0; offset < n; offset += IDLE_BATCH) {
    await Promise.all(
      conversations.slice(offset, offset + IDLE_BATCH).map((conversation) => conversation.end()),
    );
  }
  const peerFresh = await peer.worker.memory();
  const started: PeerChat[] = [];
  const died = peer.worker.exited.then((how) => {
    throw new Error(`its worker process died (${how})`);
  });
  died.catch(() => {});
  let reached = 0;
  // Read now and then, so that a worker that dies later still has a reading with what it held.
  let peerFull = { reached, memory: peerFresh };
  let peerStoppedBy: string | undefined;
  for (let offset = 0; offset < n && !peerStoppedBy; offset += IDLE_BATCH) {
    const batch = Array.from({ length: Math.min(IDLE_BATCH, n - offset) }, async () => {
      const chat = await peer.startChat();
      started.push(chat);
      await chat.send('hello');
    });
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`a batch of ${IDLE_BATCH} chats took over ${PEER_BATCH_TIMEOUT_MS / 1000} s`)),
        PEER_BATCH_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([Promise.all(batch), stalled, died]);
      reached = offset + batch.length;
      if (reached % PEER_MEMORY_EVERY === 0 || reached === n) {
        peerFull = { reached, memory: await peer.worker.memory() };
      }
    } catch (error) {
      peerStoppedBy = `after ${reached.toLocaleString('en')}: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      clearTimeout(timer);
    }
  }
  if (peerStoppedBy && peer.worker.alive()) {
    peerFull = { reached, memory: await peer.worker.memory() };
  }
  for (let offset = 0; offset < started.length; offset += 50) {
    await Promise.allSettled(
      started.slice(offset, offset + 50).map((chat) => chat.handle.terminate('idle memory measured')),
    );
  }
  return {
    conversations: n,
    reached: { ours: n, peer: peerFull.reached },
    ...(peerStoppedBy ? { peerStoppedBy } : {}),
    freshRssMb: { ours: oursFresh.rss / MB, peer: peerFresh.rss / MB },
    rssMb: { ours: oursFull.rss / MB, peer: peerFull.memory.rss / MB },
    heapMb: { ours: oursFull.heapUsed / MB, peer: peerFull.memory.heapUsed / MB },
    maxCachedWorkflows: { ours: oursFull.maxCachedWorkflows, peer: peerFull.memory.maxCachedWorkflows },
  };
}

/** What one text turn adds to each side's history at each of `turns` (1-based), its message `text(turn)`. */
async function historyGrowth(
  pair: SideBySide<Side>,
  turns: number[],
  text = (turn: number) => `turn ${turn}`,
): Promise<HistoryGrowth[]> {
  const growth: HistoryGrowth[] = [];
  const size = async (side: Side) => {
    const history = await storedHistory(side.handle);
    return { events: history.events?.length ?? 0, bytes: encodedBytes(history) };
  };
  let done = 0;
  for (const turn of turns) {
    const before: Partial<Record<'ours' | 'peer', { events: number; bytes: number }>> = {};
    for (const side of ['ours', 'peer'] as const) {
      for (let next = done + 1; next < turn; next++) await pair[side].send(text(next));
      before[side] = await size(pair[side]);
      await pair[side].send(text(turn));
    }
    done = turn;
    const after = { ours: await size(pair.ours), peer: await size(pair.peer) };
    growth.push({
      turn,
      events: {
        ours: after.ours.events - (before.ours?.events ?? 0),
        peer: after.peer.events - (before.peer?.events ?? 0),
      },
      bytes: {
        ours: after.ours.bytes - (before.ours?.bytes ?? 0),
        peer: after.peer.bytes - (before.peer?.bytes ?? 0),
      },
    });
  }
  for (const side of ['ours', 'peer'] as const) await pair[side].end();
  return growth;
}

/** Actions the server counted for one text turn and one turn with two tool calls, on each side. */
async function actionsPerTurn(
  pair: SideBySide<Side>,
  metricsUrl: string,
): Promise<{ textTurn: SideBySide<number>; toolTurn: SideBySide<number> }> {
  const counted = async (side: Side, text: string): Promise<number> => {
    // The counter is the whole server's: the conversations ended just before still finish theirs.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const before: ActionCounts = await readActions(metricsUrl);
    await side.send(text);
    // Trailing workflow tasks (search attributes after a turn) land within a second.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return totalActions(actionsBetween(before, await readActions(metricsUrl)));
  };
  // Not the first turn: it also pays for the start (ours: the default-model lookup, patch markers).
  for (const side of ['ours', 'peer'] as const) await pair[side].send('warm up');
  const result = {
    textTurn: { ours: await counted(pair.ours, 'hello'), peer: await counted(pair.peer, 'hello') },
    toolTurn: {
      ours: await counted(pair.ours, callDirective('noop', 2)),
      peer: await counted(pair.peer, callDirective('noop', 2)),
    },
  };
  for (const side of ['ours', 'peer'] as const) await pair[side].end();
  return result;
}
