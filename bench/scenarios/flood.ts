import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { AgentClient, Conversation } from '../../src/client/client.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { TSX_LOADER } from '../../test/support/cli.ts';
import type { BenchEnvironment } from '../environment.ts';
import { callDirective } from '../scriptedReplies.ts';
import type { WorkerHandle } from '../workerHandle.ts';

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

/** A bystander's turns: how many, the median and the longest. */
export interface TurnTimes {
  turns: number;
  medianMs: number;
  longestMs: number;
}

/** How a bystander conversation fared beside one flood, on a fresh worker process. */
export interface BystanderRun {
  /** The flood's turn, prompt to answer. */
  floodTurnMs: number;
  /** The bystander's turns just before the flood: what the busy machine gives a turn without it. */
  alone: TurnTimes;
  /** Its turns on the flood's worker while the flood ran. */
  beside: TurnTimes;
  /**
   * A second bystander's turns at the same time on another worker process: what the flood costs a
   * turn through the machine (CPU, the server) rather than through the worker it runs on.
   */
  elsewhere: TurnTimes;
  /** The worker's longest event-loop block over the run (perf_hooks.monitorEventLoopDelay). */
  eventLoopMaxMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
}

export interface FloodResult extends BystanderRun {
  floodChars: number;
  deltaChars: number;
  /** The other flood: a written tool that calls `console.log` `CONSOLE_FLOOD_LINES` times. */
  console?: BystanderRun & { lines: number };
}

/** The bystander's turns without a flood, for the machine's own spread. */
export const ALONE_TURNS = 10;

/** The console flood: a written tool logging this many lines in one call. */
export const CONSOLE_FLOOD_LINES = 300_000;

const CHATTY_TOOL = {
  name: 'chatty',
  label: 'Chatty',
  description: 'Logs a lot',
  inputSchema: { type: 'object', properties: {} },
  executeCode: `for (let i = 0; i < ${CONSOLE_FLOOD_LINES}; i++) console.log('line ' + i); return textResult('logged');`,
};

/**
 * (m) A model streams a 4 MB reply in 8-character deltas to one conversation while a bystander
 * conversation on the same worker sends one short turn after another: how long the bystander waits.
 * Then the same beside a written tool that floods its console.
 */
export async function measureFlood(env: BenchEnvironment): Promise<FloodResult> {
  const streamed = await measureStreamFlood(env);
  return { ...streamed, console: await measureConsoleFlood(env) };
}

async function measureStreamFlood(env: BenchEnvironment): Promise<FloodResult> {
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
    const control = await env.startWorker({ modelBaseURL: baseURL });
    try {
      const run = await besideFlood(worker, agents, control.agents, async (flood) => {
        const result = await flood.send(`flood ${FLOOD_CHARS}`);
        if (result.reply?.length !== FLOOD_CHARS)
          throw new Error(
            `The flood's turn ended ${result.status}: ${result.error ?? 'a reply of another length'}`,
          );
      });
      return { floodChars: FLOOD_CHARS, deltaChars: FLOOD_DELTA_CHARS, ...run };
    } finally {
      await Promise.all([worker.stop(), control.worker.stop()]);
    }
  } finally {
    model.kill('SIGTERM');
    if (model.exitCode === null) await once(model, 'exit');
  }
}

async function measureConsoleFlood(env: BenchEnvironment): Promise<BystanderRun & { lines: number }> {
  const toolsDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-bench-chatty-'));
  const { worker, agents } = await env.startWorker({ selfWritingDir: toolsDir });
  const control = await env.startWorker();
  try {
    const writer = await agents.startConversation({ systemPrompt: '' });
    await writer.send(callDirective('writeTool', 1, CHATTY_TOOL));
    await writer.end();
    const run = await besideFlood(worker, agents, control.agents, async (flood) => {
      await flood.send(callDirective(CHATTY_TOOL.name, 1, {}));
      const result = (await flood.messages()).find(
        (message): message is ToolResultMessage => message.role === 'toolResult',
      );
      if (result?.content[0]?.text !== 'logged')
        throw new Error(`The chatty tool answered ${JSON.stringify(result?.content[0]?.text)}`);
    });
    return { lines: CONSOLE_FLOOD_LINES, ...run };
  } finally {
    await Promise.all([worker.stop(), control.worker.stop()]);
    await rm(toolsDir, { recursive: true, force: true });
  }
}

/**
 * A bystander's turns alone, then while `flood` runs its turn on another conversation of the same
 * worker (until that turn has answered), and meanwhile a second bystander's on another worker
 * (`control`).
 */
async function besideFlood(
  worker: WorkerHandle,
  agents: AgentClient,
  control: AgentClient,
  flood: (conversation: Conversation) => Promise<void>,
): Promise<BystanderRun> {
  const bystander = await agents.startConversation({ systemPrompt: '' });
  const elsewhere = await control.startConversation({ systemPrompt: '' });
  await Promise.all([bystander.send('ping 0'), elsewhere.send('ping 0')]);
  const alone: number[] = [];
  while (alone.length < ALONE_TURNS) alone.push(await timedTurn(bystander, alone.length + 1));
  const before = await worker.memory();
  const conversation = await agents.startConversation({ systemPrompt: '', compaction: false });
  const started = performance.now();
  let floodDone = false;
  const floodTurn = flood(conversation).finally(() => {
    floodDone = true;
  });
  const turnsUntilDone = async (talker: Conversation, first: number) => {
    const times: number[] = [];
    while (!floodDone) times.push(await timedTurn(talker, first + times.length));
    return times;
  };
  const [beside, controlTimes] = await Promise.all([
    turnsUntilDone(bystander, ALONE_TURNS + 1),
    turnsUntilDone(elsewhere, 1),
  ]);
  await floodTurn;
  const floodTurnMs = performance.now() - started;
  const after = await worker.memory();
  return {
    floodTurnMs,
    alone: turnTimes(alone),
    beside: turnTimes(beside),
    elsewhere: turnTimes(controlTimes),
    eventLoopMaxMs: after.eventLoopMaxMs,
    rssBeforeMb: before.rss / 1e6,
    rssAfterMb: after.rss / 1e6,
  };
}

async function timedTurn(bystander: Conversation, turn: number): Promise<number> {
  const started = performance.now();
  await bystander.send(`ping ${turn}`);
  return performance.now() - started;
}

function turnTimes(times: number[]): TurnTimes {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    turns: sorted.length,
    medianMs: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
    longestMs: sorted.at(-1) ?? Number.NaN,
  };
}
