import type {
  ConversationWorkflow,
  EvalCaseWorkflow,
  EvalRunWorkflow,
  ScheduledPromptWorkflow,
} from '../src/contract/definitions.ts';
import { conversationWorkflow } from './conversation.ts';
import { evalCaseWorkflow, evalRunWorkflow } from './evalRun.ts';
import { scheduledPromptWorkflow } from './scheduledPrompt.ts';
import { tokenLimiterWorkflow } from './tokenLimiter.ts';

export {
  conversationWorkflow,
  evalCaseWorkflow,
  evalRunWorkflow,
  scheduledPromptWorkflow,
  tokenLimiterWorkflow,
};

// Clients type their handles with the contract's signatures; this keeps the workflows to them.
conversationWorkflow satisfies ConversationWorkflow;
scheduledPromptWorkflow satisfies ScheduledPromptWorkflow;
evalRunWorkflow satisfies EvalRunWorkflow;
evalCaseWorkflow satisfies EvalCaseWorkflow;
