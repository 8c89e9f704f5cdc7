import type { AgentClient, Conversation } from '../../src/client/client.ts';
import type { BenchEnvironment } from '../environment.ts';
import { processCpuMs } from '../machine.ts';
import { createPiAgent } from '../piAgent.ts';
import { callDirective } from '../scriptedReplies.ts';
import { type Summary, summarize, timed } from '../stats.ts';
import { noopLocalTool } from '../tools.ts';
import type { WorkerHandle } from '../workerHandle.ts';

export const OVERHEAD_TOOL_CALLS = 20;

/**
 * What each tool call adds: (turn with {@link OVERHEAD_TOOL_CALLS} calls − turn with one call) /
 * (calls − 1). Both turns make two model calls, so no part of a model call is in the difference (a
 * plain turn makes one, and subtracting it charged every call 1/20 of a model call).
 */
export const perCallMs = (manyCalls: number, oneCall: number): number =>
  (manyCalls - oneCall) / (OVERHEAD_TOOL_CALLS - 1);

interface OverheadFigures {
  perToolMs: Summary;
  /**
   * CPU per tool call of the Temporal server and the worker process together, by the same rule as
   * `perToolMs` (absent for the in-process baseline and in runs before it).
   */
  cpuPerToolMs?: Summary;
  toolTurnMs: Summary;
  /** The turn with one tool call that the per-call figure subtracts (absent in runs before it). */
  oneCallTurnMs?: Summary;
  plainTurnMs: Summary;
}

/** One run's turns: with the calls, with one call, without tools. */
export type RunTimes = [many: number, one: number, plain: number];

/** One run's turns with their server + worker CPU: [many, one] wall times and [many, one] CPU. */
interface RunReading {
  times: RunTimes;
  cpuMs: [many: number, one: number];
}

export interface OverheadResult {
  runs: number;
  ours: OverheadFigures;
  /** Ours with the tool declared `localActivity`, in the same conversation and runs (absent before it). */
  oursLocalActivity?: OverheadFigures;
  pi: OverheadFigures;
}

/** Sends a prompt and fails unless the turn completed. */
export async function sendOk(conversation: Conversation, text: string): Promise<void> {
  const result = await conversation.send(text);
  if (result.status !== 'completed')
    throw new Error(`Turn ${result.turn} ended ${result.status}: ${result.error}`);
}

/** The figures of runs' turn times (and CPU, when read). */
export function overheadFigures(
  runs: readonly RunTimes[],
  cpuMs?: readonly RunReading['cpuMs'][],
): OverheadFigures {
  return {
    perToolMs: summarize(runs.map(([many, one]) => perCallMs(many, one))),
    ...(cpuMs ? { cpuPerToolMs: summarize(cpuMs.map(([many, one]) => perCallMs(many, one))) } : {}),
    toolTurnMs: summarize(runs.map(([many]) => many)),
    oneCallTurnMs: summarize(runs.map(([, one]) => one)),
    plainTurnMs: summarize(runs.map(([, , plain]) => plain)),
  };
}

/**
 * (a) One turn whose model asks for 20 trivial tool calls run sequentially, minus a turn with one
 * call, divided by 19: what each tool call adds, in time and in server + worker CPU. Ours (the tool
 * an activity, then a local activity) and pi-agent-core alternate run by run, each run in a fresh
 * conversation (and a fresh pi agent), so no side carries the earlier runs' calls.
 */
export async function measureOverhead(
  env: BenchEnvironment,
  ours: { agents: AgentClient; worker: WorkerHandle },
  runs: number,
): Promise<OverheadResult> {
  const samples = { ours: [] as RunReading[], local: [] as RunReading[], pi: [] as RunTimes[] };
  const pids = [env.server.pid, ours.worker.child.pid as number];
  const cpu = () => pids.reduce((total, pid) => total + processCpuMs(pid), 0);
  const reading = async (send: (text: string) => Promise<unknown>, tool: string): Promise<RunReading> => {
    const before = cpu();
    const many = await timed(() => send(callDirective(tool, OVERHEAD_TOOL_CALLS)));
    const between = cpu();
    const one = await timed(() => send(callDirective(tool, 1)));
    const after = cpu();
    const plain = await timed(() => send('hello'));
    return { times: [many.ms, one.ms, plain.ms], cpuMs: [between - before, after - between] };
  };
  for (let run = -2; run < runs; run++) {
    const conversation = await ours.agents.startConversation({
      systemPrompt: '',
      toolExecution: 'sequential',
      maxModelCallsPerTurn: 50,
    });
    const send = (text: string) => sendOk(conversation, text);
    const activity = await reading(send, 'noop');
    const local = await reading(send, noopLocalTool.name);
    await conversation.end();
    const pi = createPiAgent(env.model.baseURL, 'sequential');
    const piTimes = (await reading((text) => pi.prompt(text), 'noop')).times;
    if (run < 0) continue; // warm-up
    samples.ours.push(activity);
    samples.local.push(local);
    samples.pi.push(piTimes);
  }
  const figures = (readings: RunReading[]) =>
    overheadFigures(
      readings.map(({ times }) => times),
      readings.map(({ cpuMs }) => cpuMs),
    );
  return {
    runs,
    ours: figures(samples.ours),
    oursLocalActivity: figures(samples.local),
    pi: overheadFigures(samples.pi),
  };
}
