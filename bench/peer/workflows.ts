/**
 * The peer of the benchmarks: a chat on Temporal's own agent integration (`@temporalio/openai-agents`
 * on `@openai/agents-core`), written as its README says: a `TemporalOpenAIRunner` per turn over a
 * `WorkflowSafeMemorySession`, tools as activities (`activityAsTool`), one Update per user message.
 */
import { Agent } from '@openai/agents-core';
import {
  activityAsTool,
  TemporalOpenAIRunner,
  type TemporalRunOptions,
  WorkflowSafeMemorySession,
} from '@temporalio/openai-agents/workflow';
import { condition, defineSignal, defineUpdate, setHandler } from '@temporalio/workflow';
import type * as activities from './activities.ts';

export const peerPromptUpdate = defineUpdate<string, [string]>('prompt');
export const peerEndSignal = defineSignal('end');

const noParameters = {
  type: 'object' as const,
  properties: {},
  required: [] as string[],
  additionalProperties: false as const,
};

/**
 * The runner hands `runConfig` on to agents-core's `Runner` whole, so its `toolExecution` works,
 * though `TemporalRunOptions` does not list it; hence the cast.
 */
const oneToolCallAtATime = {
  toolExecution: { maxFunctionToolConcurrency: 1 },
} as TemporalRunOptions['runConfig'];

export interface PeerChatInput {
  /**
   * Whether the model may ask for several tool calls at once, run side by side. The runner starts
   * every call of a reply at once whatever the model setting says, so a sequential chat also limits
   * it to one call at a time (`toolExecution.maxFunctionToolConcurrency`), as our sequential mode runs.
   */
  parallelToolCalls: boolean;
}

export async function peerChatWorkflow(input: PeerChatInput): Promise<void> {
  const tools = [
    activityAsTool<typeof activities.noop>(
      { name: 'noop', description: 'Does nothing', parameters: noParameters },
      { startToCloseTimeout: '30s' },
    ),
    activityAsTool<typeof activities.sleep200>(
      { name: 'sleep200', description: 'Waits 200 ms and answers "ok".', parameters: noParameters },
      { startToCloseTimeout: '30s' },
    ),
  ];
  const agent = new Agent({
    name: 'Bench',
    instructions: '',
    model: 'scripted',
    tools,
    modelSettings: { parallelToolCalls: input.parallelToolCalls },
  });
  const runner = new TemporalOpenAIRunner();
  const session = new WorkflowSafeMemorySession();
  const prompts: Array<{ text: string; answer: (reply: string) => void }> = [];
  let ended = false;
  setHandler(peerEndSignal, () => {
    ended = true;
  });
  setHandler(peerPromptUpdate, (text) => new Promise<string>((answer) => prompts.push({ text, answer })));
  for (;;) {
    await condition(() => prompts.length > 0 || ended);
    const prompt = prompts.shift();
    if (!prompt) return;
    const result = await runner.run(agent, prompt.text, {
      session,
      maxTurns: 50,
      ...(input.parallelToolCalls ? {} : { runConfig: oneToolCallAtATime }),
    });
    prompt.answer(result.finalOutput ?? '');
  }
}
