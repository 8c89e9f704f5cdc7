import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { TSX_LOADER } from '../../test/support/cli.ts';
import type { BenchEnvironment } from '../environment.ts';

/**
 * The flood: a 4 MB reply in 8-character deltas, about 524,000 of them. `FLOOD_CHARS` sets
 * another size, as in test/integration/floods.test.ts (on a loaded machine the 4 MB stream failed its
 * model call: openai's stream iterator holds at most 4,096 events a reader has not taken).
 */
export const FLOOD_CHARS = Number(process.env.FLOOD_CHARS) || 4_000_000;
export const FLOOD_DELTA_CHARS = 8;

/** A bystander's turn should never wait longer than this on a flood (issue 46). */
export const FLOOD_BYSTANDER_GOAL_MS = 1_000;

/** The tests' scripted model in a process of its own: its streaming must not slow the bench's process. */
const MODEL_PROCESS = fileURLToPath(new URL('../../test/support/scriptedModelProcess.ts', import.meta.url));

export interface FloodResult {
  floodChars: number;
  deltaChars: number;
  /** The flood's turn, prompt to answer. */
  floodTurnMs: number;
  /** The bystander's turns while the flood ran: how many, the median and the longest. */
  bystanderTurns: number;
  bystanderMedianMs: number;
  bystanderLongestMs: number;
  /** The worker's longest event-loop block over the run (perf_hooks.monitorEventLoopDelay). */
  eventLoopMaxMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
}

/**
 * (m) A model streams a 4 MB reply in 8-character deltas to one conversation while a bystander
 * conversation on the same worker sends one short turn after another: how long the bystander waits.
 */
export async function measureFlood(env: BenchEnvironment): Promise<FloodResult> {
  const model = spawn(process.execPath, ['--import', TSX_LOADER, MODEL_PROCESS], {
    env: { ...process.env, CHUNK_SIZE: String(FLOOD_DELTA_CHARS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const [baseURL] = (await once(
      createInterface({ input: model.stdout as NodeJS.ReadableStream }),
      'line',
    )) as [string];
    const { worker, agents } = await env.startWorker({ modelBaseURL: baseURL, modelTimeoutMs: 300_000 });
    try {
      const bystander = await agents.startConversation({ systemPrompt: '' });
      await bystander.send('ping 0');
      const before = await worker.memory();
      const flood = await agents.startConversation({ systemPrompt: '', compaction: false });
      const started = performance.now();
      let floodDone = false;
      const floodTurn = flood.send(`flood ${FLOOD_CHARS}`).finally(() => {
        floodDone = true;
      });
      const bystanderMs: number[] = [];
      while (!floodDone) {
        const turnStarted = performance.now();
        await bystander.send(`ping ${bystanderMs.length + 1}`);
        bystanderMs.push(performance.now() - turnStarted);
      }
      const result = await floodTurn;
      if (result.reply?.length !== FLOOD_CHARS)
        throw new Error(
          `The flood's turn ended ${result.status}: ${result.error ?? 'a reply of another length'}`,
        );
      const floodTurnMs = performance.now() - started;
      const after = await worker.memory();
      const sorted = [...bystanderMs].sort((a, b) => a - b);
      return {
        floodChars: FLOOD_CHARS,
        deltaChars: FLOOD_DELTA_CHARS,
        floodTurnMs,
        bystanderTurns: bystanderMs.length,
        bystanderMedianMs: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
        bystanderLongestMs: sorted.at(-1) ?? Number.NaN,
        eventLoopMaxMs: after.eventLoopMaxMs,
        rssBeforeMb: before.rss / 1e6,
        rssAfterMb: after.rss / 1e6,
      };
    } finally {
      await worker.stop();
    }
  } finally {
    model.kill('SIGTERM');
    if (model.exitCode === null) await once(model, 'exit');
  }
}
