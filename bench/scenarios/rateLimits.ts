import { readFile } from 'node:fs/promises';
import { AgentClient } from '../../src/client/client.ts';
import { startScriptedModel } from '../../src/testing/index.ts';
import { createAgentWorker } from '../../src/worker/worker.ts';
import type { BenchEnvironment } from '../environment.ts';
import { type Summary, summarize } from '../stats.ts';

export interface RateLimitRun {
  /** `queue`: the model's `rateLimit` (its own task queue, the server's rate); `none`: no limit on our side. */
  mode: 'queue' | 'none';
  completedTurns: number;
  failedTurns: number;
  /** Requests the provider answered 429. */
  rateLimited: number;
  /** Model calls the provider served per second, first request to last answer. */
  callsPerSecond: number;
  turnMs: Summary;
  /** The highest number of requests the provider admitted in any one second. */
  peakPerSecond: number;
}

export interface RateLimitResult {
  conversations: number;
  turnsEach: number;
  providerPerSecond: number;
  runs: RateLimitRun[];
}

/**
 * (r) `conversations` conversations each send `turnsEach` turns at once against a provider that
 * answers 429 (Retry-After: 1) above `perSecond` requests a second: once through the model's
 * rate-limited task queue, once without a limit on our side. One in-process worker, default model
 * retry policy (5 attempts).
 */
export async function measureRateLimits(
  env: BenchEnvironment,
  conversations: number,
  turnsEach: number,
  perSecond: number,
): Promise<RateLimitResult> {
  const runs: RateLimitRun[] = [];
  for (const mode of ['queue', 'none'] as const)
    runs.push(await oneRun(env, mode, conversations, turnsEach, perSecond));
  return { conversations, turnsEach, providerPerSecond: perSecond, runs };
}

async function oneRun(
  env: BenchEnvironment,
  mode: RateLimitRun['mode'],
  conversations: number,
  turnsEach: number,
  perSecond: number,
): Promise<RateLimitRun> {
  const provider = await startScriptedModel({
    rateLimit: { requestsPerSecond: perSecond },
    respond: () => ({ kind: 'text', text: 'ok' }),
  });
  const taskQueue = `bench-rate-${mode}-${process.pid}`;
  const worker = await createAgentWorker({
    connection: { address: env.server.address, taskQueue },
    tools: { builtinTools: false },
    env: { ...process.env, YIEM_PAYLOADS_DIR: env.payloadsDir },
    models: {
      models: {
        limited: {
          baseURL: provider.baseURL,
          apiKey: 'bench',
          ...(mode === 'queue' ? { rateLimit: { requestsPerMinute: perSecond * 60 } } : {}),
        },
      },
    },
    worker: { workflowBundle: { code: await readFile(env.bundlePath, 'utf8') } },
  });
  const running = worker.run();
  const agents = new AgentClient({ client: env.temporal, taskQueue });
  try {
    const started = await Promise.all(
      Array.from({ length: conversations }, () => agents.startConversation({ systemPrompt: '' })),
    );
    const turnMs: number[] = [];
    let completedTurns = 0;
    let failedTurns = 0;
    await Promise.all(
      started.map(async (conversation) => {
        for (let turn = 0; turn < turnsEach; turn++) {
          const sent = performance.now();
          const result = await conversation.send('hello');
          turnMs.push(performance.now() - sent);
          if (result.status === 'completed') completedTurns += 1;
          else failedTurns += 1;
        }
      }),
    );
    await Promise.all(started.map((conversation) => conversation.end()));
    const arrivals = provider.requests.map((request) => request.receivedAt);
    const first = Math.min(...arrivals);
    const last = Math.max(...arrivals);
    return {
      mode,
      completedTurns,
      failedTurns,
      rateLimited: provider.rateLimitedCount,
      callsPerSecond: arrivals.length / Math.max(1, (last - first) / 1000 + 1 / perSecond),
      turnMs: summarize(turnMs),
      peakPerSecond: peakInAnySecond(arrivals),
    };
  } finally {
    await worker.shutdown();
    await running;
    await provider.close();
  }
}

/** The most arrivals within any window of one second. */
function peakInAnySecond(arrivals: number[]): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let peak = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] as number) - (sorted[start] as number) >= 1000) start++;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}
