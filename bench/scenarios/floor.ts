import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import type { BenchEnvironment } from '../environment.ts';
import type { FloorWorkerConfig } from '../floor/workerProcess.ts';
import {
  type FloorToolKind,
  type FloorTurn,
  floorConversation,
  floorEndSignal,
  floorTurnUpdate,
} from '../floor/workflows.ts';
import { lastToolBatch } from '../history.ts';
import { processCpuMs } from '../machine.ts';
import { callDirective } from '../scriptedReplies.ts';
import { type Summary, summarize, timed } from '../stats.ts';
import { forkWorkerProcess, type WorkerHandle } from '../workerHandle.ts';
import { OVERHEAD_TOOL_CALLS, perCallMs } from './overhead.ts';
import { PARALLEL_TOOLS } from './parallel.ts';

const FLOOR_WORKER_SCRIPT = fileURLToPath(new URL('../floor/workerProcess.ts', import.meta.url));
const FLOOR_ROLES = {
  isModelCall: (type: string) => type === 'model',
  isToolExecution: (type: string) => type === 'tool' || type === 'tools',
};
const TOOL_KINDS: FloorToolKind[] = ['activity', 'local', 'batched'];

/** The same figure with the tools as activities, as local activities and batched in one activity. */
type ByToolKind = Record<FloorToolKind, Summary>;

export interface FloorResult {
  runs: number;
  /** (tool turn with 20 sequential no-op calls − turn with one) / 19, as section (a) measures ours. */
  perToolMs: ByToolKind;
  /** The server's and the worker's CPU by the same rule, as (a)'s CPU per tool call. */
  cpuPerToolMs: ByToolKind;
  /** 8 × 200 ms tools in parallel: the model call that asked for them completed → the next one scheduled, as (b). */
  parallelBatchMs: ByToolKind;
  /** A plain turn (an Update, one model call, the reply) on one conversation, and the CPU it cost. */
  textTurn: { ms: Summary; cpuMs: { server: Summary; worker: Summary } };
  /** Conversations sending plain turns back to back, as section (e)'s highest level. */
  throughput: {
    conversations: number;
    seconds: number;
    turnsPerSecond: Summary;
    cpuMsPerTurn: { server: Summary; worker: Summary };
  };
}

type FloorHandle = WorkflowHandle<typeof floorConversation>;

/** The bare workflow's own worker process on a fresh task queue, and a way to start its conversations. */
export async function startFloorWorker(
  env: BenchEnvironment,
): Promise<{ worker: WorkerHandle; start: () => Promise<FloorHandle> }> {
  const taskQueue = `floor-${randomUUID()}`;
  const config: FloorWorkerConfig = {
    address: env.server.address,
    taskQueue,
    modelBaseURL: env.model.baseURL,
  };
  const worker = await forkWorkerProcess(FLOOR_WORKER_SCRIPT, config);
  const start = () =>
    env.temporal.workflow.start(floorConversation, { taskQueue, workflowId: `floor-${randomUUID()}` });
  return { worker, start };
}

/**
 * (l) The platform's floor: the shapes of sections (a), (b) and (e) on a bare Temporal workflow
 * (bench/floor/workflows.ts: an Update, a model call over HTTP to the same scripted model, the tools,
 * nothing else) with its own worker process on the same dev server, so that each of our figures can
 * be read against what Temporal itself takes on these cores.
 */
export async function measureFloor(
  env: BenchEnvironment,
  options: {
    runs: number;
    parallelRuns: number;
    throughputConversations: number;
    throughputRuns: number;
    seconds: number;
  },
): Promise<FloorResult> {
  const { worker, start } = await startFloorWorker(env);
  const pids = { server: env.server.pid, worker: worker.child.pid as number };
  const cpu = () => ({ server: processCpuMs(pids.server), worker: processCpuMs(pids.worker) });
  const send = (handle: FloorHandle, turn: FloorTurn) =>
    handle.executeUpdate(floorTurnUpdate, { args: [turn] });
  const end = (handle: FloorHandle) => handle.signal(floorEndSignal);
  try {
    const plain: FloorTurn = { text: 'hello', parallel: false, tools: 'activity' };
    const sequential = (calls: number, tools: FloorToolKind): FloorTurn => ({
      text: callDirective('noop', calls),
      parallel: false,
      tools,
    });
    const perTool = samplesByKind();
    const cpuPerTool = samplesByKind();
    const serverAndWorkerCpu = () => {
      const { server, worker } = cpu();
      return server + worker;
    };
    // As (a): many calls against one, in a fresh conversation each run.
    const perCall = async (handle: FloorHandle, tools: FloorToolKind) => {
      const before = serverAndWorkerCpu();
      const many = await timed(() => send(handle, sequential(OVERHEAD_TOOL_CALLS, tools)));
      const between = serverAndWorkerCpu();
      const one = await timed(() => send(handle, sequential(1, tools)));
      const after = serverAndWorkerCpu();
      return { ms: perCallMs(many.ms, one.ms), cpuMs: perCallMs(between - before, after - between) };
    };
    for (let run = -2; run < options.runs; run++) {
      const fresh = await start();
      for (const tools of TOOL_KINDS) {
        const { ms, cpuMs } = await perCall(fresh, tools);
        if (run < 0) continue;
        perTool[tools].push(ms);
        cpuPerTool[tools].push(cpuMs);
      }
      await end(fresh);
    }

    const conversation = await start();

    const batch = samplesByKind();
    const parallelText = callDirective('sleep200', PARALLEL_TOOLS);
    for (let run = -1; run < options.parallelRuns; run++) {
      for (const tools of TOOL_KINDS) {
        await send(conversation, { text: parallelText, parallel: true, tools });
        // A local activity leaves no activity events: the batch is still model completed → model scheduled.
        const timing = await lastToolBatch(conversation, FLOOR_ROLES);
        if (run >= 0) batch[tools].push(timing.batchMs);
      }
    }

    const textMs: number[] = [];
    const textCpu = { server: [] as number[], worker: [] as number[] };
    const textTurns = 20;
    for (let round = -1; round < options.runs; round++) {
      const before = cpu();
      const turns = await timed(async () => {
        for (let turn = 0; turn < textTurns; turn++) await send(conversation, plain);
      });
      const after = cpu();
      if (round < 0) continue;
      textMs.push(turns.ms / textTurns);
      textCpu.server.push((after.server - before.server) / textTurns);
      textCpu.worker.push((after.worker - before.worker) / textTurns);
    }
    await end(conversation);

    const rates: number[] = [];
    const busyCpu = { server: [] as number[], worker: [] as number[] };
    for (let run = 0; run < options.throughputRuns; run++) {
      const conversations = await Promise.all(
        Array.from({ length: options.throughputConversations }, async () => {
          const handle = await start();
          await send(handle, plain);
          return handle;
        }),
      );
      const before = cpu();
      const deadline = performance.now() + options.seconds * 1000;
      let turns = 0;
      await Promise.all(
        conversations.map(async (handle) => {
          while (performance.now() < deadline) {
            await send(handle, plain);
            if (performance.now() <= deadline) turns += 1;
          }
        }),
      );
      const after = cpu();
      rates.push(turns / options.seconds);
      busyCpu.server.push((after.server - before.server) / turns);
      busyCpu.worker.push((after.worker - before.worker) / turns);
      await Promise.all(conversations.map(end));
    }
    return {
      runs: options.runs,
      perToolMs: summarizeByKind(perTool),
      cpuPerToolMs: summarizeByKind(cpuPerTool),
      parallelBatchMs: summarizeByKind(batch),
      textTurn: {
        ms: summarize(textMs),
        cpuMs: { server: summarize(textCpu.server), worker: summarize(textCpu.worker) },
      },
      throughput: {
        conversations: options.throughputConversations,
        seconds: options.seconds,
        turnsPerSecond: summarize(rates),
        cpuMsPerTurn: { server: summarize(busyCpu.server), worker: summarize(busyCpu.worker) },
      },
    };
  } finally {
    await worker.stop();
  }
}

const samplesByKind = (): Record<FloorToolKind, number[]> => ({ activity: [], local: [], batched: [] });

const summarizeByKind = (samples: Record<FloorToolKind, number[]>): ByToolKind => ({
  activity: summarize(samples.activity),
  local: summarize(samples.local),
  batched: summarize(samples.batched),
});
