/**
 * The conversation workflow as a careless change would leave it: a timer before the loop starts,
 * with no `patched()` guard. Every recorded conversation is nondeterministic against it.
 */
import { sleep } from '@temporalio/workflow';
import type { ConversationCarryOver } from '../../../src/contract/protocol.ts';
import type { ConversationOptions, ConversationSummary } from '../../../src/contract/types/conversation.ts';
import { conversationWorkflow as recorded } from '../../../workflows/conversation.ts';

export async function conversationWorkflow(
  options: ConversationOptions,
  carried?: ConversationCarryOver,
): Promise<ConversationSummary> {
  await sleep('1 second');
  return recorded(options, carried);
}
