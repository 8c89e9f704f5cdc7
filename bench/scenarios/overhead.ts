import type { AgentClient, Conversation } from '../../src/client/client.ts';
import type { TurnResult } from '../../src/contract/types/turns.ts';
import type { BenchEnvironment } from '../environment.ts';
import { createPiAgent } from '../piAgent.ts';
import { callDirective } from '../scriptedReplies.ts';
import { type Summary, summarize, timed } from '../stats.ts';
import { noopBatchedTool, noopLocalTool } from '../tools.ts';

export const OVERHEAD_TOOL_CALLS = 20;

interface OverheadFigures {
  perToolMs: Summary;
  toolTurnMs: Summary;
  plainTurnMs: Summary;
  /** The Actions of the turn with the tool calls, as its result's meter counts them (absent for pi-agent-core). */
  toolTurnActions?: Summary;
}

export interface OverheadResult {
  runs: number;
  ours: OverheadFigures;
  /** Ours with the tool declared `localActivity`, in the same conversation and runs (absent before it). */
  oursLocalActivity?: OverheadFigures;
  /** Ours with the tool declared `batched`: the 20 calls in one `executeTools` activity (absent before it). */
  oursBatched?: OverheadFigures;
  pi: OverheadFigures;
}

/** Sends a prompt and fails unless the turn completed. */
export async function sendOk(conversation: Conversation, text: string): Promise<void> {
  await completedTurn(conversation, text);
}

/** Sends a prompt and returns its turn's result; fails unless the turn completed. */
async function completedTurn(conversation: Conversation, text: string): Promise<TurnResult> {
  const result = await conversation.send(text);
  if (result.status !== 'completed')
    throw new Error(`Turn ${result.turn} ended ${result.status}: ${result.error}`);
  return result;
}

/**
 * (a) One turn whose model asks for 20 trivial tool calls run sequentially, minus a turn without
 * tools, divided by 20: what each tool call adds. Ours (the tool an activity, then a local activity)
 * and pi-agent-core alternate run by run.
 */
export async function measureOverhead(
  env: BenchEnvironment,
  agents: AgentClient,
  runs: number,
): Promise<OverheadResult> {
  const conversation = await agents.startConversation({
    systemPrompt: '',
    toolExecution: 'sequential',
    maxModelCallsPerTurn: 50,
  });
  const pi = createPiAgent(env.model.baseURL, 'sequential');
  const tools = callDirective('noop', OVERHEAD_TOOL_CALLS);
  const localTools = callDirective(noopLocalTool.name, OVERHEAD_TOOL_CALLS);
  const batchedTools = callDirective(noopBatchedTool.name, OVERHEAD_TOOL_CALLS);
  // Per run: the tool turn's ms, the plain turn's ms and (ours) the tool turn's Actions.
  const samples = {
    ours: [] as number[][],
    oursLocalActivity: [] as number[][],
    oursBatched: [] as number[][],
    pi: [] as number[][],
  };
  const actionsOf = (turn: TurnResult) => turn.spend?.actions ?? Number.NaN;
  for (let run = -2; run < runs; run++) {
    const oursTools = await timed(() => completedTurn(conversation, tools));
    const oursPlain = await timed(() => sendOk(conversation, 'hello'));
    const oursLocalTools = await timed(() => completedTurn(conversation, localTools));
    const oursBatchedTools = await timed(() => completedTurn(conversation, batchedTools));
    const piTools = await pi.prompt(tools);
    const piPlain = await pi.prompt('hello');
    if (run < 0) continue; // warm-up
    samples.ours.push([oursTools.ms, oursPlain.ms, actionsOf(oursTools.value)]);
    samples.oursLocalActivity.push([oursLocalTools.ms, oursPlain.ms, actionsOf(oursLocalTools.value)]);
    samples.oursBatched.push([oursBatchedTools.ms, oursPlain.ms, actionsOf(oursBatchedTools.value)]);
    samples.pi.push([piTools.ms, piPlain.ms]);
  }
  await conversation.end();
  return {
    runs,
    ours: overheadFigures(samples.ours),
    oursLocalActivity: overheadFigures(samples.oursLocalActivity),
    oursBatched: overheadFigures(samples.oursBatched),
    pi: overheadFigures(samples.pi),
  };
}

/** Per tool call = (tool turn − plain turn) / the calls; the tool turn's Actions when measured. */
function overheadFigures(runs: number[][]): OverheadFigures {
  const actions = runs.flatMap(([, , counted]) => (counted === undefined ? [] : [counted]));
  return {
    perToolMs: summarize(runs.map(([withTools = 0, plain = 0]) => (withTools - plain) / OVERHEAD_TOOL_CALLS)),
    toolTurnMs: summarize(runs.map(([withTools = 0]) => withTools)),
    plainTurnMs: summarize(runs.map(([, plain = 0]) => plain)),
    ...(actions.length > 0 ? { toolTurnActions: summarize(actions) } : {}),
  };
}
