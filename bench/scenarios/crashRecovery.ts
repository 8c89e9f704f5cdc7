import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchEnvironment } from '../environment.ts';
import { callDirective } from '../scriptedReplies.ts';
import { type Summary, summarize } from '../stats.ts';

/** The crash tool's heartbeat timeout: how soon the server notices the dead worker. */
export const CRASH_HEARTBEAT_TIMEOUT = '2 seconds';
/** How long the tool works per attempt, and when into it the worker is killed. */
export const CRASH_TOOL_MS = 1_000;
export const KILL_AFTER_MS = 300;

export interface CrashRecoveryResult {
  runs: number;
  /** SIGKILL → the fresh worker process reports ready (it is polling by then). */
  workerStartMs: Summary;
  /** SIGKILL → the tool's second attempt starts on the fresh worker. */
  retryStartMs: Summary;
  /** SIGKILL → the tool completes on the fresh worker. */
  toolDoneMs: Summary;
  /** SIGKILL → the turn (and its prompt Update) completes. */
  turnDoneMs: Summary;
}

/**
 * (f) A worker process runs a 1 s heartbeating tool; 300 ms in it is SIGKILLed and a fresh worker
 * process starts on the same task queue at once. Times are measured from the kill.
 */
export async function measureCrashRecovery(
  env: BenchEnvironment,
  runs: number,
  workerOptions?: Record<string, unknown>,
): Promise<CrashRecoveryResult> {
  const options = {
    crashHeartbeatTimeout: CRASH_HEARTBEAT_TIMEOUT,
    ...(workerOptions ? { workerOptions } : {}),
  };
  const samples = {
    start: [] as number[],
    retry: [] as number[],
    tool: [] as number[],
    turn: [] as number[],
  };
  for (let run = 0; run < runs; run++) {
    const first = await env.startWorker(options);
    const conversation = await first.agents.startConversation({ systemPrompt: '' });
    const started = first.worker.next('toolStart');
    const turn = conversation.send(callDirective('longTask', 1, { ms: CRASH_TOOL_MS }));
    await started;
    await sleep(KILL_AFTER_MS);
    const killedAt = Date.now();
    await first.worker.kill();
    const second = await env.startWorker({ ...options, taskQueue: first.taskQueue });
    const polling = Date.now();
    const retried = await second.worker.next('toolStart');
    const done = await second.worker.next('toolEnd');
    const result = await turn;
    const turnDone = Date.now();
    if (result.status !== 'completed') throw new Error(`Crash turn ended ${result.status}: ${result.error}`);
    await conversation.end();
    await second.worker.stop();
    samples.start.push(polling - killedAt);
    samples.retry.push(retried.at - killedAt);
    samples.tool.push(done.at - killedAt);
    samples.turn.push(turnDone - killedAt);
  }
  return {
    runs,
    workerStartMs: summarize(samples.start),
    retryStartMs: summarize(samples.retry),
    toolDoneMs: summarize(samples.tool),
    turnDoneMs: summarize(samples.turn),
  };
}
