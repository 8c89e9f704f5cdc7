/**
 * The history-bytes baseline: a conversation that passes its whole context in every model-call
 * activity input, as other Temporal agent integrations do. Benchmark only; not part of the product.
 */
import { condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Message } from '../../src/contract/types/messages.ts';
import type { BaselineActivities } from './activities.ts';

export const baselinePromptUpdate = defineUpdate<string, [text: string]>('prompt');

const { callModelWithContext } = proxyActivities<BaselineActivities>({
  startToCloseTimeout: '2 minutes',
});

export async function baselineConversationWorkflow(systemPrompt: string): Promise<void> {
  const messages: Message[] = [];
  let busy = false;
  setHandler(baselinePromptUpdate, async (text) => {
    await condition(() => !busy);
    busy = true;
    messages.push({ role: 'user', content: text, timestamp: Date.now() });
    const reply = await callModelWithContext({ systemPrompt, messages });
    messages.push(reply);
    busy = false;
    return reply.content;
  });
  await condition(() => false);
}
