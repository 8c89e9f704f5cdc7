/**
 * Conversations (layer 6): the options a conversation starts with, its status, what it returns,
 * prompts, schedules, forks, rewinds and pauses.
 */

import type { ApprovalWait, PendingApproval } from './approvals.ts';
import type { PendingCallback } from './callbacks.ts';
import type { CompactionOptions } from './compaction.ts';
import type { RecordedTools } from './evals.ts';
import type { GuardrailNames } from './guardrails.ts';
import type { DeliveryOptions } from './messages.ts';
import type { ModelCallPolicy } from './models.ts';
import type { Budget, Spend } from './spend.ts';
import type { TurnResult, TurnStop } from './turns.ts';

/** How the tool calls of one model reply are scheduled. */
export type ToolExecutionMode = 'sequential' | 'parallel';

/** How a paused conversation treats new prompts. */
export interface PauseOptions {
  /**
   * `'queue'` (default): `send` is accepted and answered after `resume()`. `'refuse'`: `send` is
   * refused with an error saying the conversation is paused. Posted messages (a Signal, which cannot
   * be refused to its sender) are always queued, so nothing is lost.
   */
  prompts?: 'queue' | 'refuse';
}

/** A conversation's pause, while it lasts. */
export interface PauseState {
  /** What happens to messages sent meanwhile: queued for after the pause, or refused. */
  prompts: 'queue' | 'refuse';
  /** When it was paused, milliseconds since the epoch. */
  since: number;
}

/** What a client sees of a conversation without reading the transcript. */
export interface ConversationStatus {
  /**
   * `paused`: an operator paused it (a running turn stops at its next safe point, no turn starts);
   * `budgetExhausted`: its turn stands at a safe point because a limit was reached (see `stop`).
   */
  state: 'idle' | 'running' | 'paused' | 'budgetExhausted' | 'ended';
  /** Turns started so far (the running one included). */
  turn: number;
  /** Messages in the transcript. */
  messageCount: number;
  /** Messages taken but not yet read by a model call (queued while a turn runs). */
  pendingMessages: number;
  /** Whether its tool calls run in parallel or one at a time. */
  toolExecution: ToolExecutionMode;
  /** The last finished turn's result; null before the first ends. */
  lastTurn: TurnResult | null;
  /** Tool calls waiting for a person's approval, oldest first; a sub-agent's too (see `PendingApproval.subAgent`). */
  pendingApprovals: PendingApproval[];
  /**
   * Set while the running turn waits for a person: how many of its own calls wait for approval, and
   * the sub-agent conversations (by id, the one that asks) whose calls wait, oldest first. A parent
   * whose sub-agent waits is `running` in `state`, but waits for that approval all the same.
   */
  awaitingApproval: ApprovalWait | null;
  /** Callback tool calls waiting for a client's result, oldest first. */
  pendingCallbacks: PendingCallback[];
  /**
   * The running tool batch's calls answered in PREPARE (an unknown tool, arguments that are not
   * valid, a `beforeToolCall` block), by tool call id: they never start, and their results join the
   * transcript with the batch's. Absent from workers older than it.
   */
  answeredInPrepare?: string[];
  /** The agent a handoff made active, or `null` while the conversation's own system prompt and tools apply. */
  agent: string | null;
  /** Spent so far by the conversation and by the running (or last) turn, sub-agents included. */
  spend: {
    /** The whole conversation. */
    conversation: Spend;
    /** The running (or last) turn alone. */
    turn: Spend;
  };
  /** The limits in force (`ConversationOptions.budget`, as raised since). */
  budget: Budget;
  /** Set while an operator has the conversation paused. */
  pause: PauseState | null;
  /** Set while the running turn stands at a safe point: why. */
  stop: TurnStop | null;
  /**
   * Where the event log ends as this status was read: follow from here (`events({ fromOffset })`) to
   * see everything that happens after it. One query instead of this and `eventOffset()`. Absent from
   * workers older than it.
   */
  eventOffset?: number;
}

/** The input a conversation workflow starts with. */
export interface ConversationOptions {
  /** The instructions every model call starts with. */
  systemPrompt: string;
  /** `'parallel'` runs a batch's parallel-safe tool calls at once; `'sequential'` one by one. Default `'parallel'`. */
  toolExecution?: ToolExecutionMode;
  /**
   * The model of this conversation's calls, by the worker's name for it (`AgentWorkerOptions.models.models`),
   * or, on a worker with one model, the name sent to its endpoint. Default: the worker's default model.
   */
  model?: string;
  /** Model calls allowed in one turn before it stops with `limitReached`. Default 25. */
  maxModelCallsPerTurn?: number;
  /** Largest user message accepted, in bytes (UTF-8). Default 100 000. */
  maxMessageBytes?: number;
  /**
   * Timeouts and retries of model calls. Defaults: 2 minutes a call, a 30 s heartbeat timeout (the
   * worker heartbeats every 15 s, and the server receives at most one per 24 s, so a dead worker is
   * noticed within it), 5 attempts from 1 s, doubling.
   */
  modelPolicy?: ModelCallPolicy;
  /** How long a tool call waits for approval (a Temporal duration string). Default: no limit. */
  approvalTimeout?: string;
  /** What an approval that times out becomes. Default `'deny'`. */
  onApprovalTimeout?: 'approve' | 'deny';
  /**
   * Turns after which the conversation continues as a new workflow run (same conversation id, same
   * transcript), so its history stays small. It also does so whenever Temporal suggests it. Default:
   * only when Temporal suggests it.
   */
  maxTurnsPerRun?: number;
  /** The names of the registered tools this conversation's model is offered. Default: every tool. */
  tools?: string[];
  /**
   * What happens when the model's context would pass its window: by default (or with settings) the
   * older turns are summarised by a model call (`compactContext`) and model calls send the summary
   * and the recent turns; `false` leaves the older turns out instead. The transcript stays whole.
   */
  compaction?: CompactionOptions | false;
  /** Limits on model calls, tool calls, tokens, cost and wall time (see `Budget`). Default: none. */
  budget?: Budget;
  /**
   * The worker's guardrails (`AgentWorkerOptions.hooks.guardrails`) that check this conversation's
   * messages, by name, in the order they run. Default: none (a worker's guardrails apply only
   * where a conversation or an agent names them).
   */
  guardrails?: GuardrailNames;
  /**
   * Set by an eval (`runEval`, `yiem eval`): the kept conversation's tool results this conversation
   * answers its tool calls from instead of running the tools. Default: tools run.
   */
  recordedTools?: RecordedTools;
}

/** What the conversation workflow returns when it ends. */
export interface ConversationSummary {
  /** Turns it ran. */
  turns: number;
  /** Messages in its transcript. */
  messageCount: number;
  /** The last turn's result: a sub-agent's reply. */
  lastTurn?: TurnResult | null;
  /** What the conversation spent, sub-agents included (absent in runs from before budgets). */
  spend?: Spend;
}

/** Options of one message sent with `Conversation.send` (the `prompt` Update's second argument). */
export interface PromptOptions extends DeliveryOptions {
  /** This turn's model, by the worker's name for it; later turns go back to the conversation's. */
  model?: string;
}

/**
 * What a prompt schedule sends on each run: the input of `scheduledPromptWorkflow`, which the schedule
 * starts (`AgentClient.schedules.create`).
 */
export interface ScheduledPrompt {
  /** The user message sent on each run. */
  text: string;
  /** The existing conversation it is posted to; absent when each run starts a new conversation. */
  conversationId?: string;
  /** Each run starts a conversation with these, sends the message and ends it after the reply. */
  newConversation?: ScheduledConversation;
}

/** The conversation a prompt schedule starts on each run. */
export interface ScheduledConversation {
  /** What each run's conversation starts with (system prompt, mode…). */
  options: ConversationOptions;
  /** The title the Web UI shows for each run's conversation. */
  title: string;
  /** Its `YiemAgent` search attribute. */
  agent: string;
  /** Whether the namespace has yiem's search attributes (the schedule's creation found out). */
  searchable: boolean;
}

/** What one run of a prompt schedule did. */
export interface ScheduledPromptRun {
  /** The conversation the message went to (for a new conversation per run, the one it started). */
  conversationId: string;
  /**
   * For a new conversation, the result of its one turn. A message posted to an existing conversation
   * is answered by that conversation's next turn, read there.
   */
  turn?: TurnResult | null;
}

/** How `Conversation.fork` makes a new conversation from an earlier turn of one. */
export interface ForkOptions {
  /**
   * The turn the fork starts from: it gets the transcript before that turn, and that turn's user
   * message (or `editMessage`) as its first message, answered at once as its turn `atTurn`. One past
   * the last turn of an idle conversation copies the whole transcript and queues nothing.
   */
  atTurn: number;
  /** Replaces the user message(s) of turn `atTurn`. */
  editMessage?: string;
  /** The fork's model. Default: the source conversation's. */
  model?: string;
  /** The fork's system prompt. Default: the source conversation's. */
  systemPrompt?: string;
  /** The names of the tools the fork's model is offered. Default: the source conversation's. */
  tools?: string[];
  /** The fork's conversation id. Default: `<source id>-fork-<random>`. */
  id?: string;
  /** The Web UI's title of the fork. Default: `fork of <source id> at turn N`. */
  title?: string;
}

/** How `Conversation.rewind` resets a conversation in place. */
export interface RewindOptions {
  /** The conversation goes back to just before this turn: this turn and every later one are discarded. */
  toTurn: number;
  /** Recorded with the reset in the history (the Web UI shows it). Default: `yiem rewind to before turn N`. */
  reason?: string;
}

/** What `Conversation.rewind` did and what it discarded. */
export interface RewindResult {
  /** The run the reset started; the conversation id stays. */
  runId: string;
  /** The run that was reset (the one in which turn `toTurn` started). */
  resetRunId: string;
  /** The history event the run was reset to (a WorkflowTaskCompleted). */
  resetEventId: number;
  /** The turns discarded: `toTurn` up to the latest turn. */
  discardedTurns: {
    /** The first turn discarded: `toTurn`. */
    from: number;
    /** The last: the latest turn there was. */
    to: number;
  };
  /** Transcript messages kept (those before turn `toTurn`). */
  keptMessages: number;
  /** Transcript messages discarded (turn `toTurn` on). */
  discardedMessages: number;
  /**
   * Messages that had reached the conversation before the reset point (they arrived while turn
   * `toTurn - 1` still ran, or the run started with them): they stay, and turn `toTurn` runs again on them.
   */
  requeuedMessages: number;
}
