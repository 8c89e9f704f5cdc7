export { conversationWorkflow } from './conversation.ts';
