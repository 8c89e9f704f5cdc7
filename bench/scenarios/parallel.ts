import type { AgentClient } from '../../src/client/client.ts';
import type { BenchEnvironment } from '../environment.ts';
import { lastToolBatch } from '../history.ts';
import { createPiAgent } from '../piAgent.ts';
import { callDirective } from '../scriptedReplies.ts';
import { type Summary, summarize, timed } from '../stats.ts';
import { SLOW_TOOL_MS, slowBatchedTool, slowLocalTool } from '../tools.ts';
import { sendOk } from './overhead.ts';

export const PARALLEL_TOOLS = 8;

interface ModeResult {
  batchMs: Summary;
  turnMs: Summary;
  /** Ours only: model reply → first execution scheduled. */
  toExecutionMs?: Summary;
  /** Ours only: first execution scheduled → last execution completed. */
  executionsMs?: Summary;
}

export interface ParallelResult {
  runs: number;
  /**
   * Parallel mode with the tool declared `localActivity` and with it declared `batched` (each
   * absent in runs before it).
   */
  ours: {
    parallel: ModeResult;
    sequential: ModeResult;
    parallelLocalActivity?: ModeResult;
    parallelBatched?: ModeResult;
  };
  pi: { parallel: ModeResult; sequential: ModeResult };
}

/**
 * (b) 8 tools of 200 ms in parallel and in sequential mode, and in parallel mode as local activities
 * (whose executions leave no activity events, so only the batch is timed); the batch's wall time and
 * the turn's.
 */
export async function measureParallel(
  env: BenchEnvironment,
  agents: AgentClient,
  runs: number,
): Promise<ParallelResult> {
  const directive = callDirective('sleep200', PARALLEL_TOOLS);
  const modes = ['parallel', 'sequential'] as const;
  const samples = () => ({ batch: [] as number[], turn: [] as number[] });
  const ourSamples = () => ({ ...samples(), toExecution: [] as number[], executions: [] as number[] });
  const ours = { parallel: ourSamples(), sequential: ourSamples() };
  const pi = { parallel: samples(), sequential: samples() };
  for (const mode of modes) {
    const conversation = await agents.startConversation({ systemPrompt: '', toolExecution: mode });
    const piAgent = createPiAgent(env.model.baseURL, mode);
    for (let run = -1; run < runs; run++) {
      const turn = await timed(() => sendOk(conversation, directive));
      const batch = await lastToolBatch(conversation.handle);
      const piRun = await piAgent.prompt(directive);
      if (run < 0) continue;
      ours[mode].batch.push(batch.batchMs);
      ours[mode].toExecution.push(batch.toExecutionMs);
      ours[mode].executions.push(batch.executionsMs);
      ours[mode].turn.push(turn.ms);
      pi[mode].batch.push(piRun.batchMs ?? Number.NaN);
      pi[mode].turn.push(piRun.ms);
    }
    await conversation.end();
  }
  const local = await parallelBatches(agents, slowLocalTool.name, runs);
  const batched = await parallelBatches(agents, slowBatchedTool.name, runs);
  const describe = (samples: {
    batch: number[];
    turn: number[];
    toExecution?: number[];
    executions?: number[];
  }): ModeResult => ({
    batchMs: summarize(samples.batch),
    turnMs: summarize(samples.turn),
    ...(samples.toExecution ? { toExecutionMs: summarize(samples.toExecution) } : {}),
    ...(samples.executions ? { executionsMs: summarize(samples.executions) } : {}),
  });
  return {
    runs,
    ours: {
      parallel: describe(ours.parallel),
      sequential: describe(ours.sequential),
      parallelLocalActivity: describe(local),
      parallelBatched: describe(batched),
    },
    pi: { parallel: describe(pi.parallel), sequential: describe(pi.sequential) },
  };
}

/** `runs` turns (after a warm-up) in which the model asks for `PARALLEL_TOOLS` parallel calls of `tool`. */
async function parallelBatches(
  agents: AgentClient,
  tool: string,
  runs: number,
): Promise<{ batch: number[]; turn: number[] }> {
  const measured = { batch: [] as number[], turn: [] as number[] };
  const conversation = await agents.startConversation({ systemPrompt: '', toolExecution: 'parallel' });
  const directive = callDirective(tool, PARALLEL_TOOLS);
  for (let run = -1; run < runs; run++) {
    const turn = await timed(() => sendOk(conversation, directive));
    const batch = await lastToolBatch(conversation.handle);
    if (run < 0) continue;
    measured.batch.push(batch.batchMs);
    measured.turn.push(turn.ms);
  }
  await conversation.end();
  return measured;
}

/** Ideal time over actual time: 1 when 8 parallel tools take as long as one. */
export function parallelEfficiency(batchMs: number): number {
  return SLOW_TOOL_MS / batchMs;
}
