/**
 * The data that passes between the conversation workflow and its activities. Plain data only: it is
 * recorded in Temporal history.
 */
import type { Sinks } from '@temporalio/workflow';
import type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import type { CompactionSummary, KeptCompaction } from './compaction.ts';
import type {
  StoredContent,
  TranscriptEntry,
  TranscriptPage,
  TranscriptTail,
  TurnStarts,
} from './transcript.ts';
import type { AgentDefinition } from './types/agents.ts';
import type { ApprovalOutcome, PendingApproval } from './types/approvals.ts';
import type { ActivityPolicy, JsonSchema, ToolArguments } from './types/base.ts';
import type { PauseState } from './types/conversation.ts';
import type { AgentEvent, ConversationEvent, EventOrigin } from './types/events.ts';
import type { GuardrailStage } from './types/guardrails.ts';
import type {
  AgentToolCall,
  AssistantMessage,
  MessageDelivery,
  ToolResultMessage,
} from './types/messages.ts';
import type { Budget, Spend, SpendLimits } from './types/spend.ts';
import type { ToolInfo, ToolRunner } from './types/tools.ts';
import type { TurnResult } from './types/turns.ts';

/** A user message waiting for the next turn. */
export interface PendingMessage {
  id: number;
  text: string;
  timestamp: number;
  /** Set on messages taken since deliveries (patch `yiem-delivery`); absent: `'steer'`. */
  delivery?: MessageDelivery;
  /** The turn that ran when it was taken (its `messageQueued` event); absent: it came between turns. */
  queuedInTurn?: number;
  /** The model its `prompt` asked for (`PromptOptions.model`): the model of the turn that drains it. */
  model?: string;
}

/** A message key the conversation took (`DeliveryOptions.key`), and what became of its message. */
export interface SeenMessage {
  key: string;
  messageId: number;
  /** The turn that answered it, once one drained it. */
  turn?: number;
}

/** What a conversation learns from its worker once per run (the `modelRouting` activity). */
export interface ModelRoutingInfo {
  /** The model calls go to when nothing names one. */
  defaultModel: string;
  /** The task queue of each rate-limited model: its calls are scheduled there. */
  queues: Record<string, string>;
  /** Whether the worker has a `route` function: then each model call asks it first (`routeModel`). */
  routed: boolean;
}

/** What the `routeModel` activity gives the worker's `route` function. */
export interface RouteModelInput {
  conversationId: string;
  turn: number;
  requested: string;
  agent?: string;
  messageCount: number;
}

/** What a conversation hands to its next run when it continues as new. */
export interface ConversationCarryOver {
  /** Large messages travel as references (see `TranscriptEntry`), so this stays small. */
  messages: TranscriptEntry[];
  /** Posted messages no turn has consumed yet. */
  pending: PendingMessage[];
  nextMessageId: number;
  turn: number;
  lastTurn: TurnResult | null;
  ending: boolean;
  /** The event log's position and unread tail; absent in runs from before events existed. */
  events?: EventLogCarryOver;
  /** The agent a handoff made active. */
  agent?: AgentDefinition;
  /** Set when this conversation is a sub-agent: the parent conversation its approvals go to. */
  parentConversation?: string;
  /** Where each turn began in `messages`; absent in runs from before turns were recorded. */
  turnStarts?: TurnStarts;
  /** Where the user messages no input guardrail has seen begin; absent: none are waiting. */
  inputChecked?: number;
  /** Names the transcript for caches (see `ConversationState.transcriptId`); absent: the first run's id. */
  transcriptId?: string;
  /** Set when the last run continued as new to move to its Worker Deployment's new target version. */
  movedToNewVersion?: boolean;
  /** What the conversation has spent (absent in runs from before budgets). */
  spend?: Spend;
  /** The budget in force when it was raised since the start (it replaces `ConversationOptions.budget`). */
  budget?: Budget;
  /** Set while an operator has the conversation paused. */
  pause?: PauseState;
  /** Its compactions and the model's window; absent in runs from before compaction. */
  compaction?: CompactionCarryOver;
  /** The transcript length the last run's latest model call read (`ConversationState.lastCallMessageCount`). */
  lastCallMessageCount?: number;
  /** The latest message keys it took, oldest first; absent in runs from before deliveries. */
  seenMessages?: SeenMessage[];
}

/** What a conversation's compaction hands to its next run. */
export interface CompactionCarryOver {
  /** The latest compactions, oldest first (at most `MAX_KEPT_COMPACTIONS`). */
  compactions: KeptCompaction[];
  /** The window the worker last reported, in bytes. */
  window?: number;
}

/**
 * A model call carries a reference to its context, not the context: the activity reads the first
 * `messageCount` messages from its worker's cache of them, or by query what the cache lacks, so each
 * message enters history once. (Runs from before patch `yiem-context-sink` also carried the small
 * entries since the previous call in `tail`, recording them twice.)
 */
export interface CallModelInput {
  conversationId: string;
  turn: number;
  messageCount: number;
  /** The conversation's first run id: names its transcript across continue-as-new (for caches). */
  transcriptId?: string;
  /** Inline user messages too large to keep in the workflow: the call stores them and returns their references. */
  storeIndices?: number[];
  /**
   * Before patch `yiem-context-sink`: the entries added since the run's previous model call (ending
   * at `messageCount`), when they are small (`MAX_CONTEXT_TAIL_BYTES`): a worker whose cached
   * transcript reaches `tail.from` appends them instead of querying the workflow. Since that patch the
   * workflow hands them to its worker's cache by the `yiemModelContext` sink instead, outside history.
   */
  tail?: TranscriptTail;
  model?: string;
  /**
   * Whether someone followed the event log when the workflow scheduled this call (absent: yes). Nobody
   * following, a long attempt sends its events rarely: each signal is a billed Action and a workflow task.
   */
  followed?: boolean;
  /** The event log's offset when the call was scheduled: live-channel followers see its events after the log's before it. */
  eventOffset?: number;
  /** The active agent (after a handoff): its system prompt replaces the conversation's. */
  agent?: AgentDefinition;
  /** The names of the tools the model is offered; absent: every registered tool. */
  tools?: string[];
  /**
   * Set once the conversation has compacted: the call sends compaction `id`'s summary (read by the
   * `compactions` query) and the messages from `upTo` on. Absent: the messages from the start.
   */
  compaction?: { id: number; upTo: number };
  /**
   * Set when the call runs as a local activity (`ModelCallPolicy.localActivity`): the workflow's key
   * for it, by which a failed attempt hands its events to the next, and the attempts it may take.
   */
  local?: { callKey: string; maximumAttempts: number };
}

/**
 * The failure type of a model call run as a local activity whose worker lacks the conversation's
 * context: inside the open workflow task it cannot query the workflow for it, so it fails at once
 * and the workflow makes the call an activity.
 */
export const MODEL_CONTEXT_NOT_CACHED = 'ModelContextNotCached';

/**
 * Summarises messages `from` to `upTo - 1` of the transcript (read by reference, as a model call
 * does), folded into `previous`, the summary of the messages before `from`.
 */
export interface CompactContextInput {
  conversationId: string;
  turn: number;
  /** The compaction's id, so the worker can keep the summary for the model calls that follow. */
  id: number;
  from: number;
  upTo: number;
  transcriptId?: string;
  previous?: CompactionSummary;
  /** Default: the worker's default model. */
  model?: string;
  /** The conversation's own compaction prompt; absent: `DEFAULT_COMPACTION_PROMPT` (kept out of history). */
  prompt?: string;
  /** Whether anyone followed the event log when the compaction was scheduled (as `CallModelInput.followed`). */
  followed?: boolean;
  /** The event log's offset when the call was scheduled: live-channel followers see its events after the log's before it. */
  eventOffset?: number;
}

/**
 * The summary (stored when large) and the model that wrote it (`'custom'`: the worker's function),
 * with the events of its model calls (a `modelFallback`) when they travel in the result.
 */
export type CompactContextOutput = CompactionSummary & { model: string; events?: ActivityEvents };

/**
 * A tool call's closing `toolEnd` without its text: the result message in the same output holds it,
 * and the workflow rebuilds it from there (`toolEndText`), so that history keeps the result once.
 */
export type ToolEndOfResult = Omit<Extract<ConversationEvent, { type: 'toolEnd' }>, 'type' | 'text'> & {
  type: 'toolEndOfResult';
};

/**
 * Events an activity attempt produced before it went live. A short attempt sends no signal: its
 * events travel in its result and the workflow publishes them, in order and with their origin, before
 * it acts on the result. `messageText` stands for the attempt's text deltas and `toolEndOfResult` for
 * its closing `toolEnd`, which the workflow rebuilds from the message so that no text is recorded twice.
 */
export type ActivityEvents = ((
  | ConversationEvent
  | (EventOrigin & { type: 'messageText' })
  | ToolEndOfResult
) & {
  /**
   * On the first event of an attempt that followers read live from the payload store's live channel
   * (a {@link LiveEntry} `preview`): the attempt's name there, so followers know these events again.
   */
  origin?: string;
})[];

/**
 * A model call's reply, with its events when they travel in the result, and its tool calls PREPAREd
 * in the same activity (one activity and one workflow task fewer per batch than a PREPARE of its own).
 * `stored` is set when the reply itself is large: the transcript keeps its outline.
 * `storedMessages` are the references of the messages of `storeIndices`.
 */
export type CallModelOutput = AssistantMessage & {
  events?: ActivityEvents;
  prepared?: SentPreparedToolCall[];
  stored?: StoredContent;
  storedMessages?: { index: number; stored: StoredContent }[];
  /** The model's context window in bytes, as this worker sees it: when compaction is due. */
  contextWindow?: number;
};

/** What the model-call activity reads from the workflow (through a query) to build the request: a page. */
export interface ModelContext extends TranscriptPage {
  systemPrompt: string;
}

/**
 * A prepared call as `callModel` returns it: a ready call's policy is left out when it is the
 * default (`withoutDefaultPolicy`), since each reply's calls are recorded in the history.
 */
export type SentPreparedToolCall =
  | Exclude<PreparedToolCall, { kind: 'ready' }>
  | (Omit<Extract<PreparedToolCall, { kind: 'ready' }>, 'policy'> & { policy?: ResolvedToolPolicy });

export interface PrepareToolCallsInput {
  conversationId: string;
  turn: number;
  toolCalls: AgentToolCall[];
  /** The names of the tools the model was offered; a call of any other is refused. Absent: every tool. */
  tools?: string[];
}

/** The outcome of PREPARE for one call: ready to execute, or already answered with an error. */
export type PreparedToolCall =
  | {
      kind: 'ready';
      toolCallId: string;
      toolName: string;
      args: ToolArguments;
      parallel: boolean;
      policy: ResolvedToolPolicy;
      /** One line for the Temporal UI: the tool and its arguments. */
      summary: string;
      /** Set when a person must approve the call first: why. */
      approval?: { reason: string };
      /** Where the execution is scheduled when the tool declares its own task queue. */
      taskQueue?: string;
      /** Set when the call runs as a sub-agent, a handoff or on a client instead of in `executeTool`. */
      runner?: ToolRunner;
      /** The tool is at most once: an activity that fails for good leaves the outcome unknown. */
      atMostOnce?: true;
      /** The call runs as a local activity (`ActivityTool.localActivity`). */
      localActivity?: true;
      /**
       * The call may share an `executeTools` activity with the reply's other batched calls of the
       * same task queue and policy (`ActivityTool.batched`): set only for a re-runnable activity
       * call that needs no approval (`batchableCall`, activities/prepare.ts).
       */
      batched?: true;
    }
  | { kind: 'immediate'; message: ToolResultMessage };

/** A tool's policy with every default filled in. */
export interface ResolvedToolPolicy {
  startToCloseTimeout: string;
  heartbeatTimeout: string;
  scheduleToStartTimeout?: string;
  retry: Required<NonNullable<ActivityPolicy['retry']>>;
}

/**
 * A large result the workflow itself received (a Nexus operation's output), to be kept as an
 * activity's tool result is: cut at the worker's `maxToolResultBytes`, and stored by reference when
 * above the inline size.
 */
export interface KeepToolResultInput {
  conversationId: string;
  turn: number;
  message: ToolResultMessage;
}

export interface ExecuteToolInput {
  conversationId: string;
  turn: number;
  toolCallId: string;
  toolName: string;
  args: ToolArguments;
  /** The attempt on which a thrown error becomes an error result instead of a retry. */
  maximumAttempts: number;
  /**
   * Whether someone followed the event log when the workflow scheduled this call (absent: yes). Nobody
   * following, a long attempt sends its events rarely: each signal is a billed Action and a workflow task.
   */
  followed?: boolean;
  /** The event log's offset when the call was scheduled: live-channel followers see its events after the log's before it. */
  eventOffset?: number;
  /** What the conversation may still spend, when it has a budget (`ToolCallInfo.remainingBudget`). */
  remainingBudget?: SpendLimits;
  /**
   * The workflow's key for the call (`tool-<turn>-<toolCallId>`, an activity's ID), sent only for a
   * call run as a local activity, whose own activity ID Temporal numbers per run: its
   * `idempotencyKey` is made from it, and a failed attempt hands its events to the next by it.
   */
  callKey?: string;
}

/** The calls of one model reply that run in one `executeTools` activity (`ActivityTool.batched`). */
export interface ExecuteToolsInput {
  conversationId: string;
  turn: number;
  /** The calls, in the order the model asked for them; `callKey` is each one's `tool-<turn>-<id>`. */
  calls: { toolCallId: string; toolName: string; args: ToolArguments; callKey: string }[];
  /** Parallel mode: the calls run concurrently; else one after another, in order. */
  concurrent: boolean;
  /** Each call's own start-to-close timeout (the calls' shared policy), a Temporal duration. */
  callTimeout: string;
  /** As `ExecuteToolInput`: the attempt on which a thrown error becomes an error result. */
  maximumAttempts: number;
  followed?: boolean;
  eventOffset?: number;
  remainingBudget?: SpendLimits;
}

/** One result per call of `ExecuteToolsInput.calls`, in its order, and the attempt's events. */
export interface ExecuteToolsOutput {
  results: Omit<ExecuteToolOutput, 'events'>[];
  events?: ActivityEvents;
}

/**
 * The heartbeat details of an `executeTools` attempt: the calls it finished (by index, with their
 * results, a large one by reference to the payload store), so that a retried attempt resumes after
 * them, and the latest progress report, which the Web UI shows.
 */
export interface ToolBatchCheckpoint {
  done: { index: number; toolCallId: string; output: Omit<ExecuteToolOutput, 'events'> }[];
  progress?: { toolCallId: string; partialResult: unknown };
}

/**
 * The failure type of an `executeTool` activity whose call's result is an error: the failure's one
 * detail is the call's `ExecuteToolOutput` (activities/execute.ts `endToolActivity`). Histories
 * recorded before it hold such results as completed activities; the workflow reads both.
 */
export const TOOL_CALL_FAILED = 'ToolCallFailed';

export interface ExecuteToolOutput {
  /** A large result is in the payload store; the transcript keeps its outline (see `TranscriptEntry`). */
  message: ToolResultMessage & { stored?: StoredContent };
  terminate: boolean;
  events?: ActivityEvents;
}

/**
 * Runs the named guardrails of `stage` on each message, one after another (a rewrite is what the
 * next reads; a trip stops that message's checks). Messages travel as the transcript keeps them:
 * a stored one is read from the payload store.
 */
export interface RunGuardrailsInput {
  conversationId: string;
  turn: number;
  stage: GuardrailStage;
  guardrails: string[];
  messages: TranscriptEntry[];
  /**
   * Whether anyone followed the event log when the guardrails were scheduled (as
   * `CallModelInput.followed`). Set by workflow code that reads a `RunGuardrailsOutput`; without it
   * the activity answers with the outcomes alone, as it did before.
   */
  followed?: boolean;
  /** The event log's offset when the call was scheduled: live-channel followers see its events after the log's before it. */
  eventOffset?: number;
}

/** The outcomes, one per message in order, and the events of the guardrails' model calls (a `modelFallback`). */
export interface RunGuardrailsOutput {
  outcomes: GuardrailOutcome[];
  events?: ActivityEvents;
}

/** What the guardrails decided about one message of `RunGuardrailsInput.messages`. */
export type GuardrailOutcome =
  | { action: 'pass' }
  | { action: 'rewrite'; text: string; rewrittenBy: string[] }
  | { action: 'trip'; guardrail: string; reason: string };

/** The activities the conversation workflow schedules, by name. */
export interface AgentActivities {
  /** A model call, with PREPARE of the tool calls it asks for. */
  callModel(input: CallModelInput): Promise<CallModelOutput>;
  /** A compaction's summary: a model call of its own (or the worker's `compact` function). */
  compactContext(input: CompactContextInput): Promise<CompactContextOutput>;
  /** One tool call: EXECUTE and FINALIZE. */
  executeTool(input: ExecuteToolInput): Promise<ExecuteToolOutput>;
  /** Several batched calls of one reply, each with EXECUTE and FINALIZE, checkpointed one by one. */
  executeTools(input: ExecuteToolsInput): Promise<ExecuteToolsOutput>;
  /** A result the workflow received, cut and stored as `executeTool` keeps its own (its outline when stored). */
  keepToolResult(input: KeepToolResultInput): Promise<
    ToolResultMessage & {
      /** Set when the result went to the payload store: the transcript keeps its outline. */
      stored?: StoredContent;
    }
  >;
  /** The worker's guardrails on messages: one outcome per message, in order (bare for an input without `followed`). */
  runGuardrails(input: RunGuardrailsInput): Promise<RunGuardrailsOutput | GuardrailOutcome[]>;
  /** The worker's default model name, so that the Web UI can name the model of every model call. */
  defaultModel(): Promise<string>;
  /** The worker's default model, its rate-limited models' task queues, and whether a route decides. */
  modelRouting(): Promise<ModelRoutingInfo>;
  /** The model the worker's `route` function picks for one call. */
  routeModel(input: RouteModelInput): Promise<string>;
  /** The tools the worker serves, for clients that want to show them. */
  listTools(): Promise<ToolInfo[]>;
  /** Checks a client's callback result against the tool's output schema: `null`, or what is wrong. */
  checkCallbackOutput(input: {
    toolName: string;
    schema: JsonSchema;
    output: unknown;
  }): Promise<string | null>;
}

/** What a sub-agent's conversation tells its parent about its approvals (by signal). */
export type SubAgentApprovalMessage =
  | { kind: 'requested'; conversationId: string; approval: PendingApproval }
  | { kind: 'resolved'; conversationId: string; outcome: ApprovalOutcome };

/** The workflow stream topic every conversation event is published on. */
export const EVENTS_TOPIC = 'events';

/** A conversation event without its origin; publishers add turn, attempt and sequence number. */
export type ConversationEventBody = ConversationEvent extends infer Event
  ? Event extends ConversationEvent
    ? Omit<Event, keyof EventOrigin>
    : never
  : never;

/** What the event log hands to the next run when the conversation continues as new. */
export interface EventLogCarryOver {
  stream: WorkflowStreamState;
  seq: number;
  /** When a follower last polled the previous run: followers' polls land on the new run a moment later. */
  followedAt?: number;
}

/** The worker's `eventSink`, reached from workflow code for calls the workflow runs itself. */
export interface AgentEventSinks extends Sinks {
  yiemAgentEvents: { emit(event: AgentEvent): void };
  /** Copies what the event log just took to the live channel, for followers who read it there. */
  yiemLiveEvents: { append(entries: LiveEntry[]): void };
  /**
   * Hands the entries a model call is about to read to the worker's cache of transcript
   * `transcriptId` (`CallModelInput.transcriptId`), outside history: each entry is already recorded
   * once (the Update or Signal that brought a message, the activity result of a reply or a tool
   * result), so the call needs neither a second copy in its input nor a context query.
   */
  yiemModelContext: { append(transcriptId: string, tail: TranscriptTail): void };
}

/**
 * What followers read from a conversation's live channel in the payload store, outside Temporal:
 * - `logged`: an event the log took, at its offset. `origin` names the activity attempt whose result
 *   carried it, when that attempt was read live as it ran.
 * - `preview`: an event of an activity attempt still running; the log takes it with the attempt's
 *   result, under the same `origin`. `index`: its place among the attempt's events (an attempt
 *   writes them all again when a follower comes); `after`: the log's offset when the call was scheduled.
 */
export type LiveEntry =
  | { kind: 'logged'; offset: number; event: ConversationEvent; origin?: string }
  | { kind: 'preview'; origin: string; index: number; event: ConversationEvent; after: number };

/** The event log from an offset on, as the `events` query answers. */
export interface EventLogPage {
  items: { offset: number; event: ConversationEvent }[];
  /**
   * The offset after the last item: where the next page, or the next live event, starts. A log that
   * no longer holds the offset asked for answers from its oldest event, as a poll does.
   */
  next: number;
}
