import type { ConversationWorkflow } from '../src/contract/definitions.ts';
import { conversationWorkflow } from './conversation.ts';

export { conversationWorkflow };

// Clients type their handles with the contract's signature; this keeps the workflow to it.
conversationWorkflow satisfies ConversationWorkflow;
