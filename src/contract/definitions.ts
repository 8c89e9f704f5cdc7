/**
 * The conversation workflow's public messages. Exported from the package so that the plain Temporal
 * client can talk to a conversation as well as `AgentClient` does.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { KeptCompaction } from './compaction.ts';
import type { EvalCaseInput, EvalCaseRun, EvalProgress, EvalRunInput } from './evals.ts';
import type {
  ConversationCarryOver,
  EventLogPage,
  ModelContext,
  SubAgentApprovalMessage,
} from './protocol.ts';
import type { TranscriptPage, TurnStarts } from './transcript.ts';
import type { ApprovalDecision, ApprovalOutcome } from './types/approvals.ts';
import type { CallbackAnswer } from './types/callbacks.ts';
import type {
  ConversationOptions,
  ConversationStatus,
  ConversationSummary,
  PauseOptions,
  PromptOptions,
  ScheduledPrompt,
  ScheduledPromptRun,
} from './types/conversation.ts';
import type { DeliveryOptions } from './types/messages.ts';
import type { Budget, BudgetChange } from './types/spend.ts';
import type { ToolInfo } from './types/tools.ts';
import type { TurnResult } from './types/turns.ts';

/**
 * Sends a user message and resolves with the result of the turn that consumed it. `options` (absent:
 * steer) says how it joins a running turn, names it for exactly-once delivery (`DeliveryOptions`)
 * and may pick that turn's model (`model`).
 */
export const promptUpdate = defineUpdate<TurnResult, [text: string, options?: PromptOptions]>('prompt');

/** Posts a user message without waiting; it joins the next model call (or as `options.delivery` says). */
export const postSignal = defineSignal<[text: string, options?: DeliveryOptions]>('post');

/**
 * Cancels the running turn: its activities are cancelled, unfinished tool calls get a "cancelled"
 * result, and the turn ends with status `cancelled`. Resolves with whether a turn was running.
 */
export const cancelUpdate = defineUpdate<boolean>('cancel');

/**
 * Wakes an idle conversation: if its Worker Deployment has a new current version, it continues as
 * new onto it now rather than after its next turn (`AgentClient.upgradeConversations`).
 */
export const upgradeSignal = defineSignal('upgrade');

/**
 * Pauses the conversation: the running turn stops at its next safe point (before a model call or a
 * tool batch, never in the middle of one) and no new turn starts until `resume`; prompts are queued
 * or refused as `options.prompts` says. Resolves with whether a turn was running.
 */
export const pauseUpdate = defineUpdate<boolean, [options: PauseOptions]>('pause');

/**
 * Lifts a pause, and continues a turn stopped at a safe point (paused, or at its budget once it is
 * raised) where it stopped. Resolves with the result of that turn, once it ends or stops at its
 * budget again; `null` when no turn was stopped or running. Refused while the stopped turn's
 * budget is still exhausted.
 */
export const resumeUpdate = defineUpdate<TurnResult | null>('resume');

/** Changes the budget's limits (see `BudgetChange`) and resolves with the budget now in force. */
export const raiseBudgetUpdate = defineUpdate<Budget, [change: BudgetChange]>('raiseBudget');

/** Ends the conversation once the running turn and pending messages are done. */
export const endSignal = defineSignal('end');

/**
 * A page of the transcript from an index on (default 0), at most `maxBytes` (default 512 KB) of
 * entries. Large messages come as outlines with a `stored` reference into the payload store:
 * `Conversation.messages()` reads every page and resolves them.
 */
export const transcriptQuery = defineQuery<TranscriptPage, [fromIndex?: number, maxBytes?: number]>(
  'transcript',
);

/** Where each turn began in the transcript (for `Conversation.fork` and `rewind`). */
export const turnStartsQuery = defineQuery<TurnStarts>('turnStarts');

/** State, turn number and the last turn's result. */
export const statusQuery = defineQuery<ConversationStatus>('status');

/** The system prompt and a page of the transcript from an index on: how model calls read their context. */
export const modelContextQuery = defineQuery<ModelContext, [fromIndex: number, maxBytes?: number]>(
  'modelContext',
);

/**
 * Compacts the context now: the turns before the latest `keepRecentTurns` (the conversation's
 * setting) are summarised, after the running turn if one runs. Resolves with the compaction, or
 * `null` when there is nothing older to summarise. Refused when the conversation has `compaction: false`.
 */
export const compactUpdate = defineUpdate<KeptCompaction | null>('compact');

/**
 * The event log from `fromOffset` on, at most `maxItems` events: how a follower who reads the live
 * channel catches up when it attaches, and fills a gap. A query, so it adds nothing to the history.
 */
export const eventsQuery = defineQuery<EventLogPage, [fromOffset: number, maxItems?: number]>('events');

/**
 * The conversation's latest compactions (see `MAX_KEPT_COMPACTIONS`) from compaction `fromId` on
 * (default: all kept), oldest first. A large summary comes as a `stored` reference:
 * `Conversation.compactions()` resolves it.
 */
export const compactionsQuery = defineQuery<KeptCompaction[], [fromId?: number]>('compactions');

/** Approves or denies a tool call that waits for approval, by approval id (or an unambiguous tool call id). */
export const decideToolCallUpdate = defineUpdate<ApprovalOutcome, [decision: ApprovalDecision]>(
  'decideToolCall',
);

/** The tools the conversation's workers serve (asked of a worker, so it is current). */
export const toolsUpdate = defineUpdate<ToolInfo[]>('tools');

/** Hands back the result of a callback tool call (see `Conversation.serveCallbacks`). */
export const callbackResultUpdate = defineUpdate<void, [answer: CallbackAnswer]>('callbackResult');

/** From a sub-agent's conversation to its parent: an approval it waits for, or how one was settled. */
export const subAgentApprovalSignal = defineSignal<[message: SubAgentApprovalMessage]>('subAgentApproval');

/** From a parent to its sub-agent: the decision a person made on the parent about the sub-agent's call. */
export const forwardedDecisionSignal = defineSignal<[decision: ApprovalDecision]>('forwardedDecision');

/**
 * The conversation workflow's signature, for clients that type their handles without importing
 * workflow code. `workflows/index.ts` checks that the workflow has it.
 */
export type ConversationWorkflow = (
  options: ConversationOptions,
  carried?: ConversationCarryOver,
) => Promise<ConversationSummary>;

/** The workflow a prompt schedule starts on each run: it sends the prompt where the schedule says. */
export type ScheduledPromptWorkflow = (prompt: ScheduledPrompt) => Promise<ScheduledPromptRun>;

/** An eval run's progress: how many cases, which have finished and which run now. */
export const evalProgressQuery = defineQuery<EvalProgress>('evalProgress');

/** An eval run: its cases as child workflows, a few at a time; their runs in the cases' order. */
export type EvalRunWorkflow = (input: EvalRunInput) => Promise<EvalCaseRun[]>;

/** One case of an eval run: its replay, in an activity that a crash retries. */
export type EvalCaseWorkflow = (input: EvalCaseInput) => Promise<EvalCaseRun>;
