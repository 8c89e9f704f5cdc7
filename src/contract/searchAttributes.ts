import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * The search attributes every conversation carries (registered on the dev server by
 * `YIEM_SEARCH_ATTRIBUTES`), so that the Web UI and `yiem list --status` can filter conversations.
 */
export const YIEM_STATUS = defineSearchAttributeKey('YiemStatus', SearchAttributeType.KEYWORD);
/** How many turns the conversation has run (`YiemTurns`). */
export const YIEM_TURNS = defineSearchAttributeKey('YiemTurns', SearchAttributeType.INT);
/** The conversation's agent (`YiemAgent`): `startConversation({ agent })`, default the task queue. */
export const YIEM_AGENT = defineSearchAttributeKey('YiemAgent', SearchAttributeType.KEYWORD);
/** Set on a conversation made by `Conversation.fork`: the id of the conversation it was forked from. */
export const YIEM_FORKED_FROM = defineSearchAttributeKey('YiemForkedFrom', SearchAttributeType.KEYWORD);
/**
 * What the conversation has cost so far, in the currency of the workers' price table. Set only on
 * conversations started on a namespace that has it registered (older ones have the three above).
 */
export const YIEM_COST = defineSearchAttributeKey('YiemCost', SearchAttributeType.DOUBLE);

/** The values `YiemStatus` takes. */
export const CONVERSATION_STATUSES = [
  'idle',
  'running',
  'awaitingApproval',
  'paused',
  'budgetExhausted',
  'ended',
] as const;
/** One of {@link CONVERSATION_STATUSES}. */
export type ConversationSearchStatus = (typeof CONVERSATION_STATUSES)[number];
