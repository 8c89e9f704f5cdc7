import { type CancellationScope, workflowInfo } from '@temporalio/workflow';
import type {
  ConversationCarryOver,
  ModelRoutingInfo,
  PendingMessage,
  SeenMessage,
} from '../src/contract/protocol.ts';
import type { ConversationSearchStatus } from '../src/contract/searchAttributes.ts';
import { type ConversationSettings, resolveConversationSettings } from '../src/contract/settings.ts';
import type { TranscriptEntry, TurnStarts } from '../src/contract/transcript.ts';
import type { AgentDefinition } from '../src/contract/types/agents.ts';
import type { ConversationOptions } from '../src/contract/types/conversation.ts';
import type { MessageDelivery } from '../src/contract/types/messages.ts';
import type { TurnResult } from '../src/contract/types/turns.ts';
import { Approvals } from './approvals.ts';
import { CallbackCalls } from './callbackTools.ts';
import { ConversationCompaction } from './compaction.ts';
import { ConversationEvents } from './events.ts';
import { searchAttributeUpdater } from './searchAttributes.ts';
import { ForwardedApprovals, ParentLink } from './subAgentApprovals.ts';
import { TurnControl } from './turnControl.ts';

/**
 * Everything one run of a conversation holds. The handlers (handlers.ts), the loop
 * (conversation.ts) and the turn (turn.ts) read and write it by name; `carryOver` hands the part
 * that outlives the run to the next one.
 */
export interface ConversationState {
  /** The workflow id. */
  readonly conversationId: string;
  readonly settings: ConversationSettings;
  /** The transcript; each turn appends to it. */
  readonly messages: TranscriptEntry[];
  /** User messages waiting for a turn, oldest first. */
  readonly pending: PendingMessage[];
  /** How many `prompt`s wait for each message, by message id (a retried send waits for the first's turn). */
  readonly waiters: Map<number, number>;
  /** The result of the turn that consumed an awaited message, by message id, until its `prompt`s return. */
  readonly resultsByMessage: Map<number, TurnResult>;
  /** The latest message keys taken, oldest first (workflows/delivery.ts). */
  readonly seenMessages: SeenMessage[];
  /** The tool batch running now, which a message sent with delivery `'interrupt'` cancels. */
  toolBatch: RunningBatch | undefined;
  nextMessageId: number;
  /**
   * Names this transcript for the workers' caches of it (`CallModelInput.transcriptId`): the first
   * run's id across continue-as-new, since the transcript only grows. A reset (`Conversation.rewind`)
   * cuts it back, so a run that was reset names a new transcript: its own run id, handed on.
   */
  readonly transcriptId: string;
  /** Whether this run started on a move to a new Worker Deployment version (workflows/versionUpgrade.ts). */
  readonly startedOnNewVersion: boolean;
  /** Where each turn began in `messages` (`recordTurnStart`). */
  readonly turnStarts: TurnStarts;
  /**
   * Where the user messages the input guardrails have not seen begin: they run before the model
   * call that first reads a message, in whichever turn that is (a turn can end, cancelled or at its
   * limit, after draining messages and before its model call).
   */
  inputChecked: number;
  /** The number of the latest turn (the running one while `running` is set). */
  turn: number;
  /** Turns run since this run started (for `maxTurnsPerRun`). */
  turnsThisRun: number;
  /** The running turn's cancellation scope; unset between turns. */
  running: CancellationScope | undefined;
  /** Set by the `end` Signal: no more messages are taken, and the run ends once the pending ones are answered. */
  ending: boolean;
  lastTurn: TurnResult | null;
  /** The agent a handoff made active: its prompt, tools and model replace the conversation's. */
  agent: AgentDefinition | undefined;
  /**
   * The transcript length the latest model call read (its `messageCount`), carried to the next run:
   * the worker that ran it caches that much, so the next call sends the entries since (`CallModelInput.tail`).
   */
  lastCallMessageCount: number | undefined;
  /** The model calls go to when the conversation names none, once the worker told it. */
  workerModel: string | undefined;
  /** The worker's models as it told them this run (patch `yiem-model-routing`). */
  modelRouting: ModelRoutingInfo | undefined;
  /** The model the running turn's prompt asked for (`PromptOptions.model`). */
  turnModel: string | undefined;
  /** The results of this turn's tool calls given up because their worker died too often (`TurnResult.givenUp`). */
  turnGivenUp: string[];
  /** Set when this conversation is a sub-agent: the parent conversation its approvals go to. */
  readonly parentConversation: string | undefined;
  readonly events: ConversationEvents;
  /** This conversation's own tool calls waiting for a person. */
  readonly approvals: Approvals;
  /** The approvals of the running turn's sub-agents, shown and decided here. */
  readonly forwarded: ForwardedApprovals;
  /** Tells the parent (for a sub-agent) about every approval this conversation waits for. */
  readonly parentLink: ParentLink | undefined;
  readonly callbacks: CallbackCalls;
  /** The summaries that stand for older messages in model calls. */
  readonly compaction: ConversationCompaction;
  /** The budget, what was spent, and an operator's pause: what safe points (safePoint.ts) decide by. */
  readonly control: TurnControl;
  /** Keeps the `YiemStatus` and `YiemTurns` search attributes current. */
  readonly updateSearchAttributes: (status: ConversationSearchStatus, turns: number) => void;
}

/** A running tool batch: its own cancellation scope, inside the turn's. */
export interface RunningBatch {
  readonly scope: CancellationScope;
  /** Set once a message sent with delivery `'interrupt'` cancelled it. */
  interrupted: boolean;
  /** The ids of its calls answered in PREPARE, which never start (`ConversationStatus.answeredInPrepare`). */
  readonly answeredInPrepare: string[];
}

/** The state of a new run: a fresh conversation, or the one `carried` over from the last run. */
export function createConversationState(
  options: ConversationOptions,
  carried: ConversationCarryOver | undefined,
): ConversationState {
  const settings = resolveConversationSettings(options);
  const info = workflowInfo();
  const conversationId = info.workflowId;
  const reset = info.runId !== info.originalExecutionRunId;
  const events = new ConversationEvents(carried?.events);
  // A sub-agent's approvals (and its own sub-agents') are decided on its parent.
  const parentConversation = carried?.parentConversation;
  const parentLink = parentConversation ? new ParentLink(parentConversation, conversationId) : undefined;
  const control = new TurnControl(options.budget, carried);
  return {
    conversationId,
    settings,
    messages: carried?.messages ?? [],
    pending: carried?.pending ?? [],
    waiters: new Map(),
    resultsByMessage: new Map(),
    seenMessages: carried?.seenMessages ?? [],
    toolBatch: undefined,
    nextMessageId: carried?.nextMessageId ?? 0,
    transcriptId: reset ? info.runId : (carried?.transcriptId ?? info.firstExecutionRunId),
    startedOnNewVersion: carried?.movedToNewVersion === true,
    turnStarts: carried?.turnStarts ?? { firstTurn: (carried?.turn ?? 0) + 1, starts: [] },
    inputChecked: carried?.inputChecked ?? carried?.messages.length ?? 0,
    turn: carried?.turn ?? 0,
    turnsThisRun: 0,
    running: undefined,
    ending: carried?.ending ?? false,
    lastTurn: carried?.lastTurn ?? null,
    agent: carried?.agent,
    lastCallMessageCount: carried?.lastCallMessageCount,
    workerModel: undefined,
    modelRouting: undefined,
    turnModel: undefined,
    turnGivenUp: [],
    parentConversation,
    events,
    approvals: new Approvals(settings.approval, events),
    forwarded: new ForwardedApprovals(events, parentLink),
    parentLink,
    callbacks: new CallbackCalls(events),
    compaction: new ConversationCompaction(carried?.compaction),
    control,
    updateSearchAttributes: searchAttributeUpdater(control),
  };
}

/** What the next run starts from (`continueAsNew`'s second argument). */
export function carryOver(state: ConversationState): ConversationCarryOver {
  return {
    messages: state.messages,
    pending: state.pending,
    nextMessageId: state.nextMessageId,
    turn: state.turn,
    turnStarts: state.turnStarts,
    ...(state.inputChecked < state.messages.length ? { inputChecked: state.inputChecked } : {}),
    transcriptId: state.transcriptId,
    lastTurn: state.lastTurn,
    ending: state.ending,
    events: state.events.carryOver(),
    ...(state.seenMessages.length > 0 ? { seenMessages: state.seenMessages } : {}),
    ...(state.agent ? { agent: state.agent } : {}),
    ...(state.parentConversation ? { parentConversation: state.parentConversation } : {}),
    ...(state.lastCallMessageCount !== undefined ? { lastCallMessageCount: state.lastCallMessageCount } : {}),
    ...state.compaction.carryOver(),
    ...state.control.carryOver(),
  };
}

/** Notes where the turn that starts now begins in the transcript: before it drains its messages. */
export function recordTurnStart(state: ConversationState): void {
  state.turnStarts.starts.push(state.messages.length);
}

/**
 * Queues a user message for the next turn; returns its id. `delivery` is unset for messages taken
 * as before deliveries; `queuedInTurn` is the turn that ran when it came; `model` the model its
 * prompt asked for.
 */
export function enqueue(
  state: ConversationState,
  text: string,
  delivery?: MessageDelivery,
  queuedInTurn?: number,
  model?: string,
): number {
  const id = state.nextMessageId++;
  state.pending.push({
    id,
    text,
    timestamp: Date.now(),
    ...(delivery ? { delivery } : {}),
    ...(queuedInTurn === undefined ? {} : { queuedInTurn }),
    ...(model ? { model } : {}),
  });
  return id;
}
