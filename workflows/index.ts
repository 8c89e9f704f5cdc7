import type { ConversationWorkflow, ScheduledPromptWorkflow } from '../src/contract/definitions.ts';
import { conversationWorkflow } from './conversation.ts';
import { scheduledPromptWorkflow } from './scheduledPrompt.ts';
import { tokenLimiterWorkflow } from './tokenLimiter.ts';

export { conversationWorkflow, scheduledPromptWorkflow, tokenLimiterWorkflow };

// Clients type their handles with the contract's signatures; this keeps the workflows to them.
conversationWorkflow satisfies ConversationWorkflow;
scheduledPromptWorkflow satisfies ScheduledPromptWorkflow;
