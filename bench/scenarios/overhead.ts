import type { AgentClient, Conversation } from '../../src/client/client.ts';
import type { BenchEnvironment } from '../environment.ts';
import { createPiAgent } from '../piAgent.ts';
import { callDirective } from '../scriptedReplies.ts';
import { type Summary, summarize, timed } from '../stats.ts';
import { noopLocalTool } from '../tools.ts';

export const OVERHEAD_TOOL_CALLS = 20;

interface OverheadFigures {
  perToolMs: Summary;
  toolTurnMs: Summary;
  plainTurnMs: Summary;
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
  const samples = { ours: [] as number[][], oursLocalActivity: [] as number[][], pi: [] as number[][] };
  for (let run = -2; run < runs; run++) {
    const oursTools = await timed(() => sendOk(conversation, tools));
    const oursPlain = await timed(() => sendOk(conversation, 'hello'));
    const oursLocalTools = await timed(() => sendOk(conversation, localTools));
    const piTools = await pi.prompt(tools);
    const piPlain = await pi.prompt('hello');
    if (run < 0) continue; // warm-up
    samples.ours.push([oursTools.ms, oursPlain.ms]);
    samples.oursLocalActivity.push([oursLocalTools.ms, oursPlain.ms]);
    samples.pi.push([piTools.ms, piPlain.ms]);
  }
  await conversation.end();
  const describe = (pairs: number[][]) => ({
    perToolMs: summarize(
      pairs.map(([withTools = 0, plain = 0]) => (withTools - plain) / OVERHEAD_TOOL_CALLS),
    ),
    toolTurnMs: summarize(pairs.map(([withTools = 0]) => withTools)),
    plainTurnMs: summarize(pairs.map(([, plain = 0]) => plain)),
  });
  return {
    runs,
    ours: describe(samples.ours),
    oursLocalActivity: describe(samples.oursLocalActivity),
    pi: describe(samples.pi),
  };
}
