/**
 * The public contract of yiem-agent: tools, their results, hooks, events and transcript messages.
 *
 * The tool contract is the YiemAgent seed's, in TypeScript; "The event vocabulary" below maps its
 * names to pi-agent-core's and ours. Types used inside workflow code must stay plain data (no
 * functions, no classes) so that they serialise into Temporal history unchanged.
 */

/** A JSON Schema (MCP format) describing a tool's arguments. */
export type JsonSchema = Record<string, unknown>;

/** Plain JSON-like arguments a tool receives after preparation and validation. */
export type ToolArguments = Record<string, unknown>;

/** A block of text in a tool result or a message. */
export interface TextContent {
  type: 'text';
  text: string;
}

/** Token accounting reported by a model or a tool that spends tokens itself. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /**
   * What the call cost, in the currency of the worker's price table (`ModelSettings.prices`); absent
   * when the worker has no price for the model.
   */
  cost?: number;
}

/** What a tool's `execute` returns. */
export interface AgentToolResult {
  /** What the model reads as the tool result. */
  content: TextContent[];
  /** Structured data for the application and the UI; the model never sees it. */
  details: Record<string, unknown>;
  /** Tokens the tool spent, if it called a model itself. */
  usage: Usage | null;
  /**
   * Asks to end the turn after the current batch of tool calls, without another model call. The turn
   * ends only when every call of the batch asks to (as in the seed and pi-agent-core); a call
   * answered in PREPARE, denied, failed or cancelled does not. The turn's reply is then the results' text.
   */
  terminate: boolean;
}

/**
 * Streams progress while a tool runs. Each call reaches the event log as a `toolProgress` event and
 * the worker's event sink as a `toolExecutionUpdate` event; the latest rides on the activity's next
 * heartbeat. The value must be JSON-serialisable.
 */
export type OnPartialResult = (partial: Record<string, unknown>) => void;

/**
 * A tool's execution function, `execute(toolCallId, args, signal, onPartialResult)`.
 *
 * - `toolCallId` is the model's id for this call. It stays the same when the call is retried on
 *   another worker. `currentToolCall()` gives the attempt number and an idempotency key that is
 *   also unique across turns (models may reuse ids).
 * - `args` have been prepared and validated (JSON Schema defaults applied).
 * - `signal` aborts when the turn is cancelled or the activity times out; long tools should watch it.
 * - Throw `ToolError` for a failure the model should see at once; any other error is retried per the
 *   tool's retry policy and reaches the model as an error result when retries run out (at once for
 *   an `atMostOnce` tool).
 */
export type ToolExecute<TArgs extends ToolArguments = ToolArguments> = (
  toolCallId: string,
  args: TArgs,
  signal: AbortSignal | undefined,
  onPartialResult: OnPartialResult,
) => AgentToolResult | Promise<AgentToolResult>;

/**
 * The tool call being executed, as `currentToolCall()` returns it inside a tool's `execute`.
 */
export interface ToolCallInfo {
  conversationId: string;
  toolCallId: string;
  toolName: string;
  /** 1 on the first attempt; higher when the call is retried (a thrown error, a lost worker). */
  attempt: number;
  /**
   * The same on every attempt of this call and different for every other call, even when a model
   * reuses a tool call id in a later turn: pass it to services that deduplicate requests.
   */
  idempotencyKey: string;
  /**
   * What the conversation may still spend, per limit of its budget (the smaller of what is left of
   * the conversation's and the turn's), when the call was scheduled; absent without a budget.
   */
  remainingBudget?: SpendLimits;
}

/** How an activity is timed and retried. Durations are Temporal duration strings (`'30 seconds'`). */
export interface ActivityPolicy {
  /** Longest a single attempt may run. Default `'5 minutes'`. */
  startToCloseTimeout?: string;
  /** A live tool heartbeats at least this often; a dead worker is noticed within it. Default `'30 seconds'`. */
  heartbeatTimeout?: string;
  /**
   * Longest a tool call may wait on its task queue for a worker to take it (tools only). Default: no
   * limit. Stateful MCP servers set it (default `'30 seconds'`) so a call pinned to a dead worker fails.
   */
  scheduleToStartTimeout?: string;
  /** Retries for thrown errors and lost workers. Defaults: 3 attempts, 1 s first interval, doubling. */
  retry?: {
    maximumAttempts?: number;
    initialInterval?: string;
    backoffCoefficient?: number;
    maximumInterval?: string;
  };
}

/** Timeouts and retries of model calls (`ConversationOptions.modelPolicy`), and where they run. */
export interface ModelCallPolicy extends ActivityPolicy {
  /**
   * `true` runs each model call that nobody follows as a Temporal local activity, inside the workflow
   * task that asked for it, as Temporal's own agent samples configure theirs: no activity task and
   * no workflow task of its own, so a text turn is one workflow task and answers sooner, for less
   * server CPU. A call that somebody follows stays an activity, so its text streams live; so do the
   * first call of a run and a call whose new entries are too large to carry (`CallModelInput.tail`),
   * a call to a rate-limited model's queue, and a call whose worker has lost
   * the conversation's context (it was restarted, or another worker ran the previous call): a local
   * activity cannot ask the workflow for it, so such an attempt ends at once and the call runs as an
   * activity. What it gives up, as a `localActivity` tool does: no heartbeat (a worker lost mid-call
   * runs it again once the workflow task times out); queries, signals, cancellation and new messages
   * wait until the call ends or the worker extends the task (every 1.6 s, 8 s in a sub-agent); the Web
   * UI shows a marker instead of a `callModel` activity. Compaction and guardrail calls stay
   * activities. Default `false`.
   */
  localActivity?: boolean;
}

/**
 * A tool the agent can call (the seed's `agentTool`): one whose `execute` runs in a tool activity
 * (every tool a user writes), or one whose calls the workflow runs itself (`agentTool`,
 * `handoffTool`, `callbackTool`, `nexusTool`), which has a `runner` instead.
 */
export type AgentTool<TArgs extends ToolArguments = ToolArguments> = ActivityTool<TArgs> | WorkflowTool;

/** A tool whose calls run its `execute` in an `executeTool` activity, with the tool's policy. */
export interface ActivityTool<TArgs extends ToolArguments = ToolArguments> extends ToolDeclaration {
  execute: ToolExecute<TArgs>;
  runner?: undefined;
  /**
   * `true` for a tool whose call must not take effect twice (a payment, a `git push`, an e-mail).
   * Default `false`: a call whose attempt was interrupted (lost worker, timeout) runs again, with the
   * same `idempotencyKey`. An at-most-once call runs `execute` on its first attempt only: an error
   * it throws reaches the model at once, without retries, and a later attempt (the first one was
   * interrupted, and may or may not have taken effect) asks `reconcile` instead of running again
   * blindly. Without `reconcile`, or when it answers `'unknown'`, the model reads that the outcome
   * is unknown (`toolOutcomeUnknownMessage`) and the event log (`toolEnd.outcome`), transcript and
   * Web UI say so. A completed call is never run again: Temporal records its completion.
   */
  atMostOnce?: boolean;
  /**
   * `true` for a short tool (well under a second) that may run again: each call runs as a Temporal
   * local activity, on the conversation's own worker, inside the workflow task that asked for it.
   * No server round trip per call: a sequential call costs a few milliseconds of durability instead
   * of an activity's 12–20, a parallel batch ends close to its slowest call, and the calls of one
   * workflow task are one billed Action. An attempt may take `policy.startToCloseTimeout`, default
   * 10 s here. What it gives up: the call's start is not recorded, so
   * a worker lost mid-call runs the call again from its first attempt once the workflow task times
   * out; queries, signals, cancellation and new messages wait until the task's calls end or the
   * worker extends the task (every 1.6 s, 8 s in a sub-agent); there is no heartbeat, so progress
   * reaches the log with the result; and the Web UI shows a marker instead of an `executeTool` activity. Not with
   * `atMostOnce` (a lost attempt cannot be told from a first one), a `taskQueue` (a local activity
   * runs where the workflow does), or a heartbeat or schedule-to-start timeout. Default `false`.
   */
  localActivity?: boolean;
  /**
   * Only for `atMostOnce` tools: finds out whether an interrupted call took effect, typically by
   * looking up `idempotencyKey` (the key `currentToolCall()` gave the first attempt) in the service
   * the tool calls. See `ReconcileAnswer`.
   */
  reconcile?: ToolReconcile<TArgs>;
}

/**
 * What `reconcile` found about an interrupted at-most-once call: it took effect, and `done` is the
 * result the model reads; `'notDone'`: it did not, and running `execute` again is safe; `'unknown'`:
 * nobody can tell, and the model is told so.
 */
export type ReconcileAnswer = { done: AgentToolResult } | 'notDone' | 'unknown';

/** `reconcile(idempotencyKey, args)`: see `ActivityTool.reconcile`. A throw counts as `'unknown'`. */
export type ToolReconcile<TArgs extends ToolArguments = ToolArguments> = (
  idempotencyKey: string,
  args: TArgs,
) => ReconcileAnswer | Promise<ReconcileAnswer>;

/**
 * How a call of an at-most-once tool ended after an interrupted attempt: `'reconciled'`, its result
 * is what `reconcile` found done; `'rerun'`, `reconcile` found it not done and it ran again;
 * `'unknown'`, it may or may not have taken effect and was not run again.
 */
export type InterruptedCallOutcome = 'reconciled' | 'rerun' | 'unknown';

/**
 * A tool whose calls the workflow runs itself: a sub-agent's child conversation, a handoff, an
 * attached client or a Nexus operation (`runner`). Made by `agentTool`, `handoffTool`,
 * `callbackTool` and `nexusTool`; it has no `execute`.
 */
export interface WorkflowTool extends ToolDeclaration {
  runner: ToolRunner;
  execute?: undefined;
  /**
   * Its calls run once by nature: a child workflow starts once, a callback is answered once, a Nexus
   * operation is scheduled once (its handler owns its retries).
   */
  atMostOnce?: undefined;
  reconcile?: undefined;
  localActivity?: undefined;
}

/** What every tool declares, wherever its calls run. */
export interface ToolDeclaration {
  /** Unique identifier the model calls it by, e.g. `getWeather`. */
  name: string;
  /** Human-readable name, e.g. `Weather Lookup`. */
  label: string;
  /** What the tool does; shown to the model. */
  description: string;
  /** JSON Schema of the arguments; validated in full by ajv unless `validateRequiredArgs` is given. */
  inputSchema: JsonSchema;
  /**
   * Transforms raw arguments before validation (e.g. renames a legacy field). Must be pure; a throw
   * becomes an error result to the model. It may return a promise (written tools' checks run in
   * their sandbox, off the worker's event loop).
   */
  prepareArguments?: (args: ToolArguments) => ToolArguments | Promise<ToolArguments>;
  /**
   * Replaces the default JSON Schema validation. Return `null`/`undefined` to pass, or an error
   * message that goes back to the model so it can retry with corrected arguments. It may return a
   * promise.
   */
  validateRequiredArgs?: (
    args: ToolArguments,
  ) => string | null | undefined | Promise<string | null | undefined>;
  /** Whether this tool may run concurrently with others in parallel mode. */
  parallelToolExecute: boolean;
  /** Timeouts and retries of this tool's activity. */
  policy?: ActivityPolicy;
  /**
   * When true, every call waits for a person to approve it (`Conversation.approve`) before it runs; a
   * denial reaches the model as an error result with the reason.
   */
  requiresApproval?: boolean;
  /**
   * The task queue this tool's executions are scheduled on, so a heavy tool can run on dedicated
   * workers (see `AgentWorkerOptions.workflows`). Default: the conversation's own task queue.
   */
  taskQueue?: string;
  /**
   * Picks the task queue of one call in PREPARE, instead of `taskQueue` (`undefined`: `taskQueue`). MCP
   * tools of stateful servers use it to send a conversation's calls to the worker holding its session.
   */
  taskQueueFor?: (call: { conversationId: string; toolCallId: string }) => Promise<string | undefined>;
}

/** What a loaded tool file's `getTool()` may use: the registry it is being loaded into. */
export interface ToolLoadContext {
  /** Every registered tool, in registration order, at the time of the call. */
  listTools(): ToolInfo[];
  /**
   * Builds a tool whose code runs only inside this worker's sandbox. Files written by `writeTool`
   * call it: their code is data to the worker, never imported or run by it. Every `ToolRegistry`
   * provides it; it is optional only so that hand-made contexts (e.g. in tests) need not.
   */
  sandboxedTool?(spec: WrittenToolSpec): ActivityTool;
}

/** The shape of a tool module: a `getTool()` export. */
export interface ToolModule {
  /** Returns the file's tool; called once when the registry loads the file. */
  getTool(context: ToolLoadContext): AgentTool | Promise<AgentTool>;
}

/** Name, label and description of a tool: what `listTools` and clients show. */
export interface ToolInfo {
  name: string;
  label: string;
  description: string;
}

/** One tool call the model asked for. */
export interface AgentToolCall {
  type: 'function';
  id: string;
  name: string;
  /** Parsed arguments; `{}` when they could not be parsed. */
  arguments: ToolArguments;
  /** Why the arguments could not be parsed, with the raw text; PREPARE turns it into an error result. */
  argumentsError?: string;
}

/** How the tool calls of one model reply are scheduled. */
export type ToolExecutionMode = 'sequential' | 'parallel';

/** A user's message in the transcript. */
export interface UserMessage {
  role: 'user';
  content: string;
  timestamp: number;
  /** How the message was sent (see `MessageDelivery`); absent in transcripts from before deliveries. */
  delivery?: MessageDelivery;
  /** The turn that answered it: the one whose model call first saw it. */
  turn?: number;
  /** What guardrails did to this message (see `GuardrailMark`); absent when none ran or all passed. */
  guardrail?: GuardrailMark;
}

/**
 * How a message sent while a turn runs reaches the agent. A message sent to an idle conversation
 * starts the next turn, whatever its delivery.
 * - `'steer'` (the default; pi-agent-core's `steer()`): joins the running turn at its next model call,
 *   never in the middle of a tool batch.
 * - `'followUp'` (pi-agent-core's `followUp()`): waits until the running turn has ended, then starts
 *   the next turn; the running turn's result does not answer it.
 * - `'interrupt'`: cancels the running tool batch, whose unfinished calls get an "interrupted by a new
 *   message" result (so the model sees a result for every call), and joins the next model call at
 *   once. Sent while the model is called, it stops the batch that call asks for before it starts.
 */
export type MessageDelivery = 'steer' | 'followUp' | 'interrupt';

/**
 * How a message is sent: the optional second argument of the `prompt` Update and the `post` Signal
 * (src/contract/definitions.ts), and the options of `Conversation.send` and `post`.
 */
export interface DeliveryOptions {
  /** Default `'steer'`. */
  delivery?: MessageDelivery;
  /**
   * Names the message so that it is added once, however often it is sent (a client that retries):
   * a message whose key the conversation has taken already (among its latest
   * `MAX_SEEN_MESSAGE_KEYS`, across continue-as-new) is not added again, and a `prompt` with it
   * waits for the turn that answers the first. At most `MAX_MESSAGE_KEY_CHARS` characters. A
   * `prompt` without one is named by its Update id.
   */
  key?: string;
}

/** A model reply in the transcript: its text and the tool calls it asked for. */
export interface AssistantMessage {
  role: 'assistant';
  /** The reply text; empty when the model only called tools. */
  content: string;
  toolCalls: AgentToolCall[];
  /** The model that answered, by the worker's name for it (after any fallback). */
  model: string;
  usage: Usage | null;
  stopReason: 'stop' | 'toolCalls' | 'length' | 'other';
  timestamp: number;
  /** What guardrails did to this reply (see `GuardrailMark`). */
  guardrail?: GuardrailMark;
  /** Set when the model asked for could not answer and a fallback did: each switch, in order. */
  fallbacks?: ModelFallback[];
}

/** A model call moved from one model to the next of its fallback list (`AgentWorkerOptions.fallbacks`). */
export interface ModelFallback {
  from: string;
  to: string;
  /** Why `from` could not answer: the error's message (unreachable, timeout, 5xx, a long 429). */
  cause: string;
}

/** A tool call's result in the transcript, as the model reads it. */
export interface ToolResultMessage {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: TextContent[];
  details: Record<string, unknown>;
  isError: boolean;
  timestamp: number;
  /** What guardrails did to this result (see `GuardrailMark`). */
  guardrail?: GuardrailMark;
}

/** One entry of a conversation's transcript. The transcript is append-only. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** Passed to `beforeToolCall` once a call has been found and its arguments validated. */
export interface BeforeToolCallContext {
  conversationId: string;
  toolCallId: string;
  toolName: string;
  args: ToolArguments;
  tool: AgentTool;
}

/**
 * Returning `{ block: true, reason }` stops the call; the reason goes back to the model. Returning
 * `{ requireApproval: true, reason }` makes the call wait for a person's approval; the reason is shown
 * to them.
 */
export interface BeforeToolCallResult {
  block?: boolean;
  requireApproval?: boolean;
  reason?: string;
}

/** Passed to `afterToolCall` once `execute` has returned or thrown. */
export interface AfterToolCallContext {
  conversationId: string;
  toolCallId: string;
  toolName: string;
  args: ToolArguments;
  result: AgentToolResult;
  isError: boolean;
}

/** Fields `afterToolCall` may replace in the result the model receives. */
export type AfterToolCallResult = Partial<AgentToolResult> & { isError?: boolean };

/**
 * Worker-side hooks around every tool call. They run inside activities, so they may do I/O; they
 * must not depend on running on a particular worker.
 */
export interface AgentHooks {
  /**
   * Runs in PREPARE, after validation and before any execution is scheduled. Return `{ block: true }`
   * to stop the call: it then never reaches `execute` and emits no `toolExecutionStart`.
   */
  beforeToolCall?: (
    context: BeforeToolCallContext,
  ) => BeforeToolCallResult | undefined | Promise<BeforeToolCallResult | undefined>;
  /**
   * Runs in FINALIZE, after `execute`. Whatever it returns replaces the matching fields of the result
   * (content, details, usage, terminate, isError). If it throws, the result becomes an error naming
   * the hook's error (as in pi-agent-core); the tool is not run again.
   */
  afterToolCall?: (
    context: AfterToolCallContext,
  ) => AfterToolCallResult | undefined | Promise<AfterToolCallResult | undefined>;
}

/*
 * The event vocabulary
 * ====================
 * Two streams, both described here and nowhere else:
 * - `AgentEvent`: what a worker reports to its `eventSink` (`AgentWorkerOptions.eventSink`), on the
 *   worker that ran the tool, once per step of a tool call: the seed's and pi-agent-core's tool events.
 * - `ConversationEvent`: what a conversation publishes to its event log, which any client follows by
 *   offset (`Conversation.events()`): the whole turn, from any machine, after a disconnect too.
 *
 * The seed's names (YiemAgent's tools README), pi-agent-core's (`@mariozechner/pi-agent-core` 0.73,
 * its types.ts) and ours, written once. README and JSDoc point here.
 *
 * | seed | pi-agent-core | yiem-agent |
 * | --- | --- | --- |
 * | `agentTool`, `getTool()` | `AgentTool` | `AgentTool`, `ToolModule.getTool()` |
 * | `inputSchema` (JSON Schema) | `parameters` (TypeBox) | `inputSchema` (JSON Schema) |
 * | `parallelToolExecute::Bool` | `executionMode` (`'sequential'`, `'parallel'`) | `parallelToolExecute: boolean` |
 * | `agentLoopConfig.toolExecution` | `AgentLoopConfig.toolExecution` | `ConversationOptions.toolExecution` |
 * | `execute(toolCallId, args, signal, onPartialResult)` | `execute(toolCallId, params, signal?, onUpdate?)` | `ToolExecute`, the seed's signature |
 * | `onPartialResult(Dict)` | `onUpdate(partial AgentToolResult)` | `OnPartialResult(Record<string, unknown>)` |
 * | `agentToolResult(content, details, usage, terminate)` | `AgentToolResult` (no usage, `terminate?`) | `AgentToolResult` |
 * | `textContent` | `TextContent` (pi-ai) | `TextContent`, `textContent()` |
 * | `agentToolCall` | `AgentToolCall` (`type: 'toolCall'`) | `AgentToolCall` (`type: 'function'`) |
 * | `toolResultMessage`, `createToolResultMessage` | `ToolResultMessage` (`role: 'toolResult'`) | `ToolResultMessage`, `toolResultMessage()` |
 * | `prepareArguments` | `prepareArguments` | `prepareArguments` |
 * | `validateRequiredArgs` | none (the schema only) | `validateRequiredArgs` |
 * | `beforeToolCall`, `afterToolCall` | the same, in `AgentLoopConfig` | `AgentHooks` (plus `requireApproval`) |
 * | `prepareToolCall` | `prepareToolCall` | PREPARE, at the end of the `callModel` activity |
 * | `executePreparedToolCall`, `finalizeExecutedToolCall` | the same | EXECUTE and FINALIZE: the `executeTool` activity |
 * | `executeToolCalls`, `batch.terminate` | `executeToolCalls`, every result's `terminate` | the workflow's tool batch; `TurnStatus` `'terminated'` |
 * | `agentEventSink` | `Agent.subscribe(listener)` | `eventSink` (AgentEvent); `Conversation.events()` (ConversationEvent) |
 * | `toolExecutionStart` | `tool_execution_start` | `toolExecutionStart`; `toolStart` |
 * | `toolExecutionUpdate` | `tool_execution_update` | `toolExecutionUpdate`; `toolProgress` |
 * | `toolExecutionEnd` (`toolExecEndEvent`) | `tool_execution_end` | `toolExecutionEnd`; `toolEnd` (both with `willRetry`) |
 * | none (one `_process_message`) | `agent_start` … `agent_end` | `turnStart` … `turnEnd` |
 * | none (around `llmCall`) | `message_start`, `message_update`, `message_end` | `messageStart`, `textDelta`, `messageEnd` (the model's messages only) |
 * | none | `turn_start`, `turn_end` (one model call and its tools) | none: a model call's `messageStart` … its tools' `toolEnd` |
 * | none | none | `approvalRequested`, `approvalResolved`, `callbackRequested`, `handoff`, `compaction`, `modelFallback` |
 * | none (the inputChannel) | `steer()`, `followUp()` | `MessageDelivery` (`'steer'`, `'followUp'`, `'interrupt'`); `messageQueued`, `messageDelivered` |
 * | none | input and output guardrails, tripwire (OpenAI Agents SDK) | `Guardrail`; `guardrailRewrote`, `guardrailTripped` |
 *
 * Our "turn" is one prompt answered (pi-agent-core's run, `agent_start` to `agent_end`), not one
 * model call (pi-agent-core's turn).
 */

/** Events a worker reports to its `eventSink` while tools run (see "The event vocabulary" above). */
export type AgentEvent =
  /** An attempt of a tool call starts (PREPARE passed: never for a blocked or invalid call). */
  | {
      type: 'toolExecutionStart';
      conversationId: string;
      toolCallId: string;
      toolName: string;
      args: ToolArguments;
      attempt: number;
    }
  /** The tool called `onPartialResult`; `partialResult` is its value, or `{ dropped }` when too large. */
  | {
      type: 'toolExecutionUpdate';
      conversationId: string;
      toolCallId: string;
      toolName: string;
      partialResult: Record<string, unknown>;
      attempt: number;
    }
  /** The attempt ended, after FINALIZE (`afterToolCall`): `result` is what the model reads. */
  | {
      type: 'toolExecutionEnd';
      conversationId: string;
      toolCallId: string;
      toolName: string;
      result: AgentToolResult;
      isError: boolean;
      attempt: number;
      /**
       * True when this attempt failed and Temporal runs the call again: `result` is this attempt's
       * error, and the next attempt emits its own `toolExecutionStart` and `toolExecutionEnd`. Every
       * start gets an end, except when the worker itself dies during the attempt.
       */
      willRetry: boolean;
      /** Set when an earlier attempt of this at-most-once call was interrupted (see `InterruptedCallOutcome`). */
      outcome?: InterruptedCallOutcome;
    };

/**
 * Receives every event on the worker that produced it. It must not throw and should return quickly;
 * an error it throws is logged and ignored so that a broken sink never fails a tool call.
 */
export type AgentEventSink = (event: AgentEvent) => void;

/**
 * How a turn ended. `budgetExhausted`: the turn stopped at a safe point because a limit of the
 * budget was reached (see `TurnResult.budget`); it waits there for `Conversation.raiseBudget` and
 * `resume()`, or `cancel()`. A sub-agent's turn ends with it instead of waiting.
 * `guardrailTripped`: a guardrail tripped on the user's message, the reply or a tool result (see
 * `TurnResult.guardrail`); the conversation takes the next message as usual.
 */
export type TurnStatus =
  | 'completed'
  | 'terminated'
  | 'failed'
  | 'limitReached'
  | 'cancelled'
  | 'budgetExhausted'
  | 'guardrailTripped';

/** The outcome of one turn: what `prompt` returns to the caller. */
export interface TurnResult {
  turn: number;
  status: TurnStatus;
  /** The final assistant text, or the tool results' text when a tool terminated the turn. */
  reply: string;
  /** Why the turn failed or stopped early, in words a user can act on. */
  error?: string;
  /** Set with status `budgetExhausted`: the limit that was reached, and the figures. */
  budget?: BudgetExhaustion;
  /** Set with status `guardrailTripped`: which guardrail tripped, where, and why. */
  guardrail?: GuardrailTrip;
}

/**
 * What a conversation or a turn has spent. A sub-agent's spend is added to its parent's when the
 * sub-agent's task ends (its wall time is not: it ran within the parent's).
 */
export interface Spend {
  /** Model calls made (a retried call counts once). */
  modelCalls: number;
  /** Tool calls run, including sub-agent calls; a call answered in PREPARE counts too. */
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** In the currency of the workers' price table (`ModelSettings.prices`); models without a price add 0. */
  cost: number;
  /** Seconds the turns worked, without the time they stood stopped at a safe point. */
  wallTimeSeconds: number;
}

/** Limits on what may be spent, per figure of `Spend`; a figure left out has no limit. */
export type SpendLimits = Partial<Spend>;

/**
 * A conversation's budget (`ConversationOptions.budget`): limits on the whole conversation and on
 * each turn. Checked at safe points, before each model call and before each tool batch (never in the
 * middle of a batch), so a batch may go past a limit; a reached limit stops the turn there.
 */
export interface Budget {
  conversation?: SpendLimits;
  turn?: SpendLimits;
}

/**
 * A change of budget (`Conversation.raiseBudget`): each given figure replaces the limit, `null`
 * removes it; figures left out stay.
 */
export interface BudgetChange {
  conversation?: { [Figure in keyof Spend]?: number | null };
  turn?: { [Figure in keyof Spend]?: number | null };
}

/** The limit a turn reached, and the figures. */
export interface BudgetExhaustion {
  /** Whether the conversation's limit or the turn's was reached. */
  scope: 'conversation' | 'turn';
  limit: keyof Spend;
  /** The limit. */
  allowed: number;
  /** What that scope had spent when the turn stopped (with `toolCalls`: plus the batch it was about to run). */
  spent: Spend;
}

/** Why a running turn stands still at a safe point. */
export type TurnStop =
  /** An operator paused the conversation (`Conversation.pause`). */
  | { reason: 'paused'; since: number }
  /** A limit of the budget was reached. */
  | { reason: 'budgetExhausted'; since: number; exhausted: BudgetExhaustion };

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
  turn: number;
  messageCount: number;
  pendingMessages: number;
  toolExecution: ToolExecutionMode;
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
  spend: { conversation: Spend; turn: Spend };
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

/** What a conversation waits for a person to approve (`ConversationStatus.awaitingApproval`). */
export interface ApprovalWait {
  ownCalls: number;
  subAgents: string[];
}

/** The input a conversation workflow starts with. */
export interface ConversationOptions {
  systemPrompt: string;
  toolExecution?: ToolExecutionMode;
  /**
   * The model of this conversation's calls, by the worker's name for it (`AgentWorkerOptions.models`),
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
   * The worker's guardrails (`AgentWorkerOptions.guardrails`) that check this conversation's
   * messages, by name, in the order they run. Default: none (a worker's guardrails apply only
   * where a conversation or an agent names them).
   */
  guardrails?: GuardrailNames;
}

/** How a conversation compacts its context (`ConversationOptions.compaction`). */
export interface CompactionOptions {
  /**
   * The model that writes the summary: one the worker serves, by name, called at its endpoint with
   * its key and settings, and its fallbacks when it cannot answer. Default: the conversation's model.
   */
  model?: string;
  /** The system prompt of the summarising call. Default `DEFAULT_COMPACTION_PROMPT`. */
  prompt?: string;
  /** Turns (each from a user message on) kept whole after the summary. Default 4; fewer when they fill half the window. */
  keepRecentTurns?: number;
  /**
   * Compact when the context (summary and messages, bytes of JSON) would pass this. Default: the
   * window the worker reports for the model (`ModelSettings.maxContextBytes` and `maxContextTokens`).
   */
  maxContextBytes?: number;
  /** Timeouts and retries of the summarising call. Default: the conversation's `modelPolicy`. */
  policy?: ActivityPolicy;
}

/**
 * One compaction of a conversation's context (`Conversation.compactions()`): the summary that model
 * calls send instead of the transcript's messages before `upTo`.
 */
export interface Compaction {
  /** 1 for the conversation's first compaction, then counting up. */
  id: number;
  /** The turn it ran before (or, asked for between turns, the turn before it). */
  turn: number;
  /** `'window'`: the context would have passed the window; `'request'`: a client asked (`Conversation.compact()`). */
  trigger: 'window' | 'request';
  /** The transcript messages it summarised anew: indices `from` to `upTo - 1`, folded into the previous summary. */
  from: number;
  /** The summary stands for the messages before this index; model calls send the messages from it on. */
  upTo: number;
  /** The summary text. */
  summary: string;
  /** The model that wrote it, or `'custom'` for the worker's `compact` function. */
  model: string;
  /** When it was made, milliseconds since the epoch. */
  timestamp: number;
}

/** What a worker's custom compaction function (`AgentWorkerOptions.compact`) is given besides the messages. */
export interface CompactionContext {
  conversationId: string;
  /** The summary of the messages before these (fold them into it), or `undefined` for the first compaction. */
  previousSummary: string | undefined;
  /** The conversation's compaction prompt. */
  prompt: string;
  /** The model the conversation would summarise with. */
  model: string;
  /** Aborts when the workflow cancels the compaction. */
  signal: AbortSignal;
  /** The built-in summary (a model call with `prompt`), for functions that only pre- or post-process. */
  summarise(messages: Message[], previousSummary: string | undefined): Promise<string>;
}

/**
 * Writes a compaction's summary instead of the model: runs in the `compactContext` activity, so it
 * may do I/O. Its result replaces `previousSummary` (fold it in); a throw fails the attempt (retried).
 */
export type CompactionFunction = (
  messages: Message[],
  context: CompactionContext,
) => string | Promise<string>;

/** What the conversation workflow returns when it ends. */
export interface ConversationSummary {
  turns: number;
  messageCount: number;
  /** The last turn's result: a sub-agent's reply. */
  lastTurn?: TurnResult | null;
  /** What the conversation spent, sub-agents included (absent in runs from before budgets). */
  spend?: Spend;
}

/** A tool call waiting for a person to approve or deny it. */
export interface PendingApproval {
  /**
   * What to answer it by: unique in the conversation, unlike `toolCallId` (models may repeat an id,
   * even within one batch). It is the call's activity id, `tool-<turn>-<toolCallId>` (with `-2`,
   * `-3`… for a repeated id), as the Web UI shows it.
   */
  approvalId: string;
  turn: number;
  /** The model's id for the call. */
  toolCallId: string;
  toolName: string;
  args: ToolArguments;
  /** Why approval is needed: the tool's flag or `beforeToolCall`'s reason. */
  reason: string;
  /** When it was requested, milliseconds since the epoch. */
  requestedAt: number;
  /** When the timeout policy applies, if there is a timeout. */
  expiresAt?: number;
  /**
   * Set when a sub-agent's call waits: `approvalId` is then `<child conversation id>/<the child's
   * approval id>`, the key to approve it by on this (the parent's) conversation, and this names the
   * agent that asks (a sub-agent's own sub-agent, too), its conversation and its tool call id there.
   */
  subAgent?: { agent: string; conversationId: string; toolCallId: string };
}

/** A person's answer to a pending approval (the `decideToolCall` Update's argument). */
export interface ApprovalDecision {
  /**
   * The waiting call's `approvalId`. Its `toolCallId` is accepted too while no other waiting call
   * has the same one; otherwise the decision is refused with the approval ids to choose from.
   */
  approvalId: string;
  approve: boolean;
  /** Shown to the model with a denial. */
  reason?: string;
  /**
   * Who decides, as other clients name them (`yiem approve (alice@laptop)`); at most 200
   * characters (`MAX_DECIDER_CHARS`). `Conversation.approve`/`deny` send the Temporal client's
   * identity unless told otherwise.
   */
  decider?: string;
}

/**
 * How an approval was settled. Settled once: a decision that comes after the timeout policy applied
 * is refused, and one that arrives together with the timeout (in one workflow task) wins over it.
 */
export interface ApprovalOutcome {
  approvalId: string;
  toolCallId: string;
  approved: boolean;
  /**
   * `'person'` when decided through the Update, `'timeout'` when the timeout policy applied,
   * `'cancelled'` when the turn was cancelled while the call waited.
   */
  decidedBy: 'person' | 'timeout' | 'cancelled';
  reason?: string;
  /** The decision's `decider`, when a person decided and it was named. */
  decider?: string;
}

/**
 * Where an event came from: the turn, the attempt of the activity that produced it (1 for events the
 * workflow itself publishes), and its sequence number within that attempt. A retried model call
 * starts again at `seq` 0 with a higher `attempt`, so clients can discard the partial text of the
 * failed attempt.
 */
export interface EventOrigin {
  turn: number;
  attempt: number;
  seq: number;
}

/**
 * What a conversation publishes while it runs, in order (see "The event vocabulary" above). Follow it
 * with `Conversation.events()`. A turn opens with `turnStart`, when the conversation takes a prompt
 * (with the messages sent meanwhile), and closes with `turnEnd`.
 */
export type ConversationEvent = EventOrigin &
  (
    | { type: 'turnStart' }
    /** A model call's attempt produced its first output; a retried call announces itself again. */
    | { type: 'messageStart'; model: string }
    /**
     * The model asked for could not answer (down, timed out, 5xx, a 429 asking for a long wait) and
     * the call goes on to the next model of its fallback list; a `messageStart` of `to` follows.
     */
    | ({ type: 'modelFallback' } & ModelFallback)
    /** Text the model produced since the previous delta of the same attempt (batched). */
    | { type: 'textDelta'; text: string }
    /** The attempt's message is complete; its text is what the deltas of this attempt add up to. */
    | { type: 'messageEnd'; toolCalls: { id: string; name: string }[] }
    /**
     * A tool call's attempt starts (the worker's `toolExecutionStart`); a sub-agent, handoff,
     * callback or Nexus tool's call starts in the workflow. `summary` is the call in one line.
     */
    | {
        type: 'toolStart';
        toolCallId: string;
        toolName: string;
        summary: string;
        /** Set when the call runs as a sub-agent: its child conversation, to follow for detail. */
        subAgent?: { agent: string; conversationId: string };
      }
    /** The tool's `onPartialResult` (the worker's `toolExecutionUpdate`). */
    | { type: 'toolProgress'; toolCallId: string; toolName: string; partialResult: Record<string, unknown> }
    /**
     * A tool call's attempt ended; with `willRetry` it failed and runs again (a new `toolStart`).
     * `text` is the result's first line, cut short; the whole result is in the transcript.
     */
    | {
        type: 'toolEnd';
        toolCallId: string;
        toolName: string;
        isError: boolean;
        willRetry: boolean;
        text: string;
        /** Set when an earlier attempt of this at-most-once call was interrupted (see `InterruptedCallOutcome`). */
        outcome?: InterruptedCallOutcome;
      }
    /** A tool call waits for a person's approval (a sub-agent's too). */
    | { type: 'approvalRequested'; approval: PendingApproval }
    /** The approval was settled: by a person, by the timeout policy, or by a cancelled turn. */
    | { type: 'approvalResolved'; outcome: ApprovalOutcome }
    /** A callback tool's call waits for an attached client's result (`Conversation.serveCallbacks`). */
    | { type: 'callbackRequested'; callback: PendingCallback }
    /** The model's calls from now on use this agent's system prompt, tools and model. */
    | { type: 'handoff'; from: string | null; to: string }
    /**
     * Messages `from` to `upTo - 1` were folded into the summary that model calls send instead of
     * the messages before `upTo` (`Conversation.compactions()` has the text); the transcript keeps them.
     */
    | { type: 'compaction'; id: number; trigger: Compaction['trigger']; from: number; upTo: number }
    /**
     * A guardrail rewrote the user's message (before the model read it), the reply or a tool result
     * (`toolCallId`); the transcript has the new text (see `GuardrailMark`).
     */
    | { type: 'guardrailRewrote'; stage: GuardrailStage; guardrail: string; toolCallId?: string }
    /** A guardrail tripped: the turn ends with status `guardrailTripped` (its `turnEnd` follows). */
    | ({ type: 'guardrailTripped' } & GuardrailTrip)
    /**
     * The turn stopped at a safe point (paused, or a limit reached) with what it had spent; it
     * continues after `turnResumed`, or ends (`turnEnd`) when cancelled.
     */
    | { type: 'turnStopped'; stop: TurnStop; spend: { conversation: Spend; turn: Spend } }
    /** The stopped turn continues. */
    | { type: 'turnResumed' }
    /**
     * A message was taken while turn `turn` ran (`text`: its first line, cut short);
     * `messageDelivered` says when a model call reads it. A message sent between turns opens the
     * next one, announced by its `turnStart` alone.
     */
    | { type: 'messageQueued'; messageId: number; delivery: MessageDelivery; text: string }
    /**
     * A message queued while a turn ran joined turn `turn` after its `afterModelCall`-th model call
     * (0: it opened the turn, a follow-up); `interruptedCalls` counts the tool calls an `'interrupt'` message cancelled on its way.
     */
    | {
        type: 'messageDelivered';
        messageId: number;
        delivery: MessageDelivery;
        afterModelCall: number;
        interruptedCalls?: number;
      }
    /** The turn ended: what `prompt` returns, and what the turn and the conversation have spent. */
    | { type: 'turnEnd'; result: TurnResult; spend?: { conversation: Spend; turn: Spend } }
  );

/**
 * An event with its offset in the conversation's event log: resume with `events({ fromOffset: offset + 1 })`.
 * A `live` item is an event of a model or tool call still running, read from the payload store's
 * live channel before the log takes it with the call's result: its `offset` is that of the log's
 * event before it, so resuming after it reads the log from there (and the call's events again, as
 * the log has them); following on, the log's copy of it is not yielded again.
 */
export type ConversationEventItem = ConversationEvent & { offset: number; live?: true };
/**
 * A tool written by `writeTool`, as its file hands it to `ToolLoadContext.sandboxedTool`. The sources
 * are TypeScript functions built from the seed's templates; they run in the sandbox, never in the worker.
 */
export interface WrittenToolSpec {
  name: string;
  label: string;
  description: string;
  inputSchema: JsonSchema;
  parallelToolExecute: boolean;
  /** `async function execute(toolCallId, args, signal, onPartialResult) { …executeCode… }` */
  executeSource: string;
  /** `function validate(args) { …validateCode… }`, or null for the JSON Schema validation. */
  validateSource: string | null;
  /** `function prepare(args) { …prepareCode… }`, or null. */
  prepareSource: string | null;
}

/**
 * The limits written tools run under. Each call gets a fresh V8 isolate (isolated-vm): no `require`,
 * no `process`, no child processes, no file system or network beyond what these options grant.
 */
export interface SandboxOptions {
  /** Longest one call may run; a call still running is killed. Default 10 000 ms. */
  timeoutMs?: number;
  /** Heap limit of one call, in MB (at least 8); a call that needs more is killed. Default 64. */
  memoryMb?: number;
  /** Files and directories the tools' `readFile(path)` may read. Default: none. */
  fsAllowlist?: string[];
  /** Whether the tools' `fetch(url)` may reach the network. Default false. */
  allowNetwork?: boolean;
}

/** Turns on `writeTool` for a worker (it is off by default). */
export interface SelfWritingOptions extends SandboxOptions {
  /**
   * Where `writeTool` writes `<name>.ts`. The worker re-reads it before every model call and tool call,
   * so tools written here, by this worker or any other sharing the directory, work without a restart.
   */
  toolsDir: string;
}

/**
 * One MCP server whose tools a worker offers to the model beside its own, as `<server>__<tool>`
 * (see `AgentWorkerOptions.mcpServers` and `yiem worker --mcp FILE`). Give `command` for a server the
 * worker starts as a child process (stdio), or `url` for a streamable-HTTP server.
 */
export interface McpServerConfig {
  /** The program of a stdio server, e.g. `npx`. */
  command?: string;
  /** Its arguments, e.g. `["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]`. */
  args?: string[];
  /** Extra environment of a stdio server (on top of PATH, HOME and the like). */
  env?: Record<string, string>;
  /** Working directory of a stdio server. Default: the worker's. */
  cwd?: string;
  /** The endpoint of a streamable-HTTP server, e.g. `http://127.0.0.1:3001/mcp`. */
  url?: string;
  /** HTTP headers sent with every request to `url`, e.g. `Authorization`. */
  headers?: Record<string, string>;
  /**
   * `'shared'` (default): a stateless server; each worker keeps one connection and any worker runs any
   * call. `'conversation'`: a stateful server; each conversation gets its own session, held by one
   * worker, and its calls run on that worker (see docs/mcp.md).
   */
  session?: 'shared' | 'conversation';
  /** Timeouts and retries of this server's tool calls, as for any tool. */
  policy?: ActivityPolicy;
  /** `true`: every call waits for approval; a list: calls of these tools (MCP names) do. */
  requiresApproval?: boolean | string[];
  /**
   * `true`: every tool of this server is at most once (`ActivityTool.atMostOnce`): an interrupted
   * call is reported as of unknown outcome, never sent to the server again; a list: these tools
   * (MCP names) are. Default: none.
   */
  atMostOnce?: boolean | string[];
  /** Whether its tools may run concurrently with others in parallel mode. Default true. */
  parallel?: boolean;
  /** Offer only these tools (MCP names). Default: all the server lists. */
  tools?: string[];
}
/**
 * An agent a conversation can call as a tool (`agentTool`) or hand the conversation to
 * (`handoffTool`). Plain data: it travels in history to the child conversation or the next model call.
 */
export interface AgentDefinition {
  /** 1-64 letters, digits, `_` or `-`: the agent tool's name, e.g. `researcher`. */
  name: string;
  /** What the agent is good for; the calling model reads it as the tool's description. */
  description: string;
  systemPrompt: string;
  /** Names of tools registered on the worker that this agent's model is offered. Default: none. */
  tools?: string[];
  /** The model this agent's calls go to. Default: the calling conversation's model. */
  model?: string;
  /** Model calls a sub-agent may make for one task. Default: the calling conversation's limit. */
  maxModelCallsPerTurn?: number;
  /**
   * What one task of this agent may spend. The calling conversation's remaining budget bounds it
   * too, and what it spends is added to the caller's.
   */
  budget?: SpendLimits;
  /**
   * The guardrails that check this agent's messages instead of the conversation's: a sub-agent's
   * child conversation runs them, and after a handoff to it they replace the conversation's.
   * Default: a sub-agent runs none; a handoff keeps the conversation's.
   */
  guardrails?: GuardrailNames;
}

/** Where a tool's call runs when it is not an `execute` in an activity (`WorkflowTool.runner`). */
export type ToolRunner =
  /** A child conversation workflow with the agent's prompt and tools; its reply is the result. */
  | { kind: 'subAgent'; agent: AgentDefinition }
  /** The turn continues with the agent's prompt and tools; so do later turns. */
  | { kind: 'handoff'; agent: AgentDefinition }
  /**
   * An attached client runs it (`Conversation.serveCallbacks`); the workflow waits for the result
   * durably, up to `timeout` (a Temporal duration string), and checks `output` against `outputSchema`.
   */
  | { kind: 'callback'; timeout: string; outputSchema?: JsonSchema }
  /**
   * A Temporal Nexus operation of another namespace's service, which the workflow runs through
   * `endpoint` (made by `nexusTool`); the operation's output is the result.
   */
  | {
      kind: 'nexus';
      endpoint: string;
      service: string;
      operation: string;
      /** The operation's end-to-end timeout (a Temporal duration string); absent: the server's maximum. */
      scheduleToCloseTimeout?: string;
    };

/** A callback tool call waiting for a client. */
export interface PendingCallback {
  /** Unique per call in this conversation: what the result is sent with. */
  callId: string;
  turn: number;
  toolCallId: string;
  toolName: string;
  args: ToolArguments;
  requestedAt: number;
  /** When the call gives up with an error to the model. */
  expiresAt: number;
}

/** What a client hands back for a callback tool call. */
export interface CallbackToolResult {
  /** What the model reads. Default: `output` as JSON. */
  text?: string;
  /** Structured result, checked against the tool's `outputSchema`; kept in the result's details. */
  output?: unknown;
  /** The call failed on the client; the model reads `text` as the error. */
  isError?: boolean;
}

/** The `callbackResult` Update's argument. */
export interface CallbackAnswer {
  callId: string;
  result: CallbackToolResult;
}

/** Runs a callback tool on the client. A throw reaches the model as an error result with its message. */
export type CallbackHandler = (
  args: ToolArguments,
  call: PendingCallback,
) => CallbackToolResult | Promise<CallbackToolResult>;

/** Where and how the worker reaches the model. Lives on the worker only: none of it enters history. */
export interface ModelSettings {
  /** An OpenAI-compatible Chat Completions endpoint. Default: env `OPENAI_BASE_URL`, else OpenAI's. */
  baseURL?: string;
  /** Default: env `OPENAI_API_KEY`. Local endpoints that need no key get a placeholder. */
  apiKey?: string;
  /** Default model name: env `YIEM_MODEL`, else `gpt-4o-mini`. A conversation may override it. */
  model?: string;
  /** How long one HTTP request may take before it counts as a timeout (retried). Default 60 000 ms. */
  timeoutMs?: number;
  /**
   * The context window, in bytes of message JSON: a model call sends the latest turns that fit, never
   * cutting into a turn, and always the current turn whole. The transcript itself keeps everything.
   * Default: env `YIEM_MAX_CONTEXT_BYTES`, else 1 MB.
   */
  maxContextBytes?: number;
  /**
   * Context windows in tokens, by model name: the window of a model named here is the smaller of
   * `maxContextBytes` and its tokens at an estimated 4 bytes a token.
   */
  maxContextTokens?: Record<string, number>;
  /**
   * Prices per model name (as conversations name them, or as the endpoint reports them), so that
   * each model call's `usage.cost` is known and a budget can limit cost. Default: env
   * `YIEM_MODEL_PRICES` (the same as JSON), else none.
   */
  prices?: Record<string, ModelPrice>;
}

/**
 * One of a worker's models (`AgentWorkerOptions.models`): its endpoint, key and settings, what it
 * costs and how fast its provider lets it be called. Lives on the worker: conversations name it only.
 */
export interface ModelDefinition extends ModelSettings {
  /** The name sent to the endpoint. Default: the model's name in `models`. */
  model?: string;
  /** Its price; the same as `prices: { [name]: price }`. */
  price?: ModelPrice;
  /**
   * The provider's limit for this model, held by every worker together: calls to a model with
   * `requestsPerMinute` go through a task queue of their own (`<taskQueue>-model-<name>`) whose
   * dispatch rate the Temporal server enforces for the whole fleet; `tokensPerMinute` is held by
   * a limiter workflow per model.
   */
  rateLimit?: ModelRateLimit;
}

/**
 * A provider's rate limit for one model (`ModelDefinition.rateLimit`), held across every worker and
 * conversation. A provider's 429 is still retried after its Retry-After.
 */
export interface ModelRateLimit {
  /** Model calls per minute across every worker and conversation: enforced by the task queue's rate. */
  requestsPerMinute: number;
  /**
   * Tokens per minute across every worker and conversation: each call reserves its estimated input
   * tokens (its request's bytes / 4) in a sliding window kept by one limiter workflow per model
   * (`yiem-token-limiter-<taskQueue>-<model>`), waits while the window is full, and corrects the
   * reservation with the usage the provider reports. A single call estimated above the whole
   * limit fails. Default: not limited.
   */
  tokensPerMinute?: number;
  /**
   * The token window's length in milliseconds. Default 60 000 (what "per minute" means): a
   * shorter window is for tests only, which need not wait a minute.
   */
  windowMs?: number;
}

/** What a worker's `route` function decides a model call by. */
export interface ModelRouteContext {
  conversationId: string;
  turn: number;
  /** The model the call would use: the prompt's, the agent's, the conversation's, else the worker's default. */
  requested: string;
  /** The active agent's name after a handoff. */
  agent?: string;
  /** Messages in the transcript so far. */
  messageCount: number;
}

/**
 * Chooses each model call's model by name (`AgentWorkerOptions.route`); `undefined` keeps `requested`.
 * It runs in an activity (`routeModel`) before each model call, so it may be async and read anything.
 */
export type ModelRoute = (context: ModelRouteContext) => string | undefined | Promise<string | undefined>;

/** Options of one message sent with `Conversation.send` (the `prompt` Update's second argument). */
export interface PromptOptions extends DeliveryOptions {
  /** This turn's model, by the worker's name for it; later turns go back to the conversation's. */
  model?: string;
}

/** A model's price, per million tokens, in the currency budgets are written in. */
export interface ModelPrice {
  inputPerMillion: number;
  outputPerMillion: number;
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
  discardedTurns: { from: number; to: number };
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

/*
 * Guardrails
 * ==========
 * Checks a worker registers (`AgentWorkerOptions.guardrails`) and conversations name
 * (`ConversationOptions.guardrails`): on the user's message before the model reads it (`input`),
 * on the model's final reply (`output`) and on each tool result before the model reads it
 * (`toolResult`). Each runs in the `runGuardrails` activity, so it may do I/O or call a model.
 */

/** Where a guardrail checks: the user's message, the model's final reply, or a tool result. */
export type GuardrailStage = 'input' | 'output' | 'toolResult';

/**
 * What a guardrail decides about one text: let it through; replace it (the next guardrail, and the
 * model or the user, read `text`); or trip, which ends the turn with status `guardrailTripped` and
 * `reason` (the OpenAI Agents SDK's tripwire).
 */
export type GuardrailVerdict =
  | { action: 'pass' }
  | { action: 'rewrite'; text: string }
  | { action: 'trip'; reason: string };

/** What a guardrail's `execute` is given besides the text. */
export interface GuardrailContext {
  conversationId: string;
  turn: number;
  stage: GuardrailStage;
  /** The whole message the text is from (a tool result's `toolName`, say). */
  message: Message;
  /** Aborts when the turn is cancelled or the activity times out. */
  signal: AbortSignal;
  /**
   * One call to one of the worker's models (`request.model`, by name as conversations name them;
   * its endpoint, key and settings, and its `AgentWorkerOptions.fallbacks` when it cannot answer):
   * a guardrail that asks a model to judge the text. Returns the reply's text.
   */
  complete(request: GuardrailModelRequest): Promise<string>;
}

/** A model call a guardrail makes (`GuardrailContext.complete`). */
export interface GuardrailModelRequest {
  /** The system prompt: what to judge and how to answer. */
  instructions: string;
  /** The user message of the call, typically the text being checked. */
  input: string;
  /**
   * A model the worker serves, by name (`AgentWorkerOptions.models`); another name fails the turn,
   * naming the ones it serves. Default: the worker's default model.
   */
  model?: string;
}

/**
 * A check of the text of messages. `execute` may be async; a throw is retried as the activity is
 * (the conversation's `modelPolicy`), and after the last attempt the turn fails with an error that
 * names the guardrail.
 */
export interface Guardrail {
  /** What conversations name it by (`ConversationOptions.guardrails`), unique within its stage. */
  name: string;
  /** Checks one text: passes it, rewrites it or trips (ends the turn). */
  execute(text: string, context: GuardrailContext): GuardrailVerdict | Promise<GuardrailVerdict>;
}

/** The guardrails a worker registers, by stage (`AgentWorkerOptions.guardrails`). */
export interface WorkerGuardrails {
  /** Run on each user message before the model reads it. */
  input?: Guardrail[];
  /** Run on the model's final reply (one without tool calls) before it becomes the turn's reply. */
  output?: Guardrail[];
  /** Run on each tool result before the model reads it. */
  toolResult?: Guardrail[];
}

/** The names of the worker's guardrails that apply, by stage, in the order they run. */
export interface GuardrailNames {
  input?: string[];
  output?: string[];
  toolResult?: string[];
}

/** Which guardrail tripped, where, and why (`TurnResult.guardrail`, the `guardrailTripped` event). */
export interface GuardrailTrip {
  stage: GuardrailStage;
  guardrail: string;
  reason: string;
  /** Set for a tool result: the call whose result it tripped on. */
  toolCallId?: string;
}

/**
 * What guardrails did to a transcript entry. A user message keeps its `original` text beside the
 * rewrite the model read. A reply or tool result keeps only the rewrite: those guardrails exist to
 * keep text from the reader (a secret a tool returned, say); Temporal history still holds the
 * activity's output, so encrypt payloads (docs/encryption.md) where that matters. A user message or a
 * reply a guardrail tripped on, or could not check, is never sent to a model again; a tool result's
 * content becomes a note that it was withheld, so the model's call still has its result.
 */
export interface GuardrailMark {
  /** The guardrails that rewrote the text, in order. */
  rewrittenBy?: string[];
  /** A user message's text before the rewrites. */
  original?: string;
  /** The guardrail that tripped on it, and why. */
  tripped?: { guardrail: string; reason: string };
  /** Why the guardrails could not check it (the error names the guardrail): the turn failed. */
  failed?: string;
}
