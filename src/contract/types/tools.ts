/**
 * Tools (layer 5): what a tool declares, how it runs (an `execute` in an activity, or a runner the
 * workflow runs itself), what it returns, the call it is given, and how a tool file is loaded.
 *
 * The tool contract is the YiemAgent seed's, in TypeScript; "The event vocabulary" (events.ts) maps
 * its names to pi-agent-core's and ours.
 */

import type { AgentDefinition } from './agents.ts';
import type { ActivityPolicy, JsonSchema, TextContent, ToolArguments, Usage } from './base.ts';
import type { WrittenToolSpec } from './sandbox.ts';
import type { SpendLimits } from './spend.ts';

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
  /** The conversation (workflow id) whose turn made the call. */
  conversationId: string;
  /** The model's id for the call, as events and the transcript name it. */
  toolCallId: string;
  /** The tool called: useful to code shared by several tools. */
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

/**
 * A tool the agent can call (the seed's `agentTool`): one whose `execute` runs in a tool activity
 * (every tool a user writes), or one whose calls the workflow runs itself (`agentTool`,
 * `handoffTool`, `callbackTool`, `nexusTool`), which has a `runner` instead.
 */
export type AgentTool<TArgs extends ToolArguments = ToolArguments> = ActivityTool<TArgs> | WorkflowTool;

/** A tool whose calls run its `execute` in an `executeTool` activity, with the tool's policy. */
export interface ActivityTool<TArgs extends ToolArguments = ToolArguments> extends ToolDeclaration {
  /** Runs the call (the seed's signature): returns the result the model reads, or throws. */
  execute: ToolExecute<TArgs>;
  /** Never set: a `runner` makes a `WorkflowTool`, and its absence tells the two apart. */
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
   * `true`: the calls of one model reply to this tool and to other batched tools that share its
   * task queue and policy run together in one `executeTools` activity (in order in sequential mode,
   * concurrently in parallel mode): one activity task and one billed Action for the lot instead of
   * one each. The activity checkpoints after each finished call, so a retried attempt resumes after
   * the last checkpoint that reached the server; the calls after it may run again (at least once, as
   * an activity). Calls that need approval and `atMostOnce` or `localActivity` tools still run one
   * activity each. Default: the worker's `tools.batchedTools` (itself default `false`).
   */
  batched?: boolean;
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
export type ReconcileAnswer =
  | {
      /** The result of the call that took effect, which the model reads. */
      done: AgentToolResult;
    }
  | 'notDone'
  | 'unknown';

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
  /** Where its calls run: a sub-agent, a handoff, a callback or a Nexus operation. */
  runner: ToolRunner;
  /** Never set: the workflow runs the call, not an activity. */
  execute?: undefined;
  /**
   * Its calls run once by nature: a child workflow starts once, a callback is answered once, a Nexus
   * operation is scheduled once (its handler owns its retries).
   */
  atMostOnce?: undefined;
  /** Never set: nothing to reconcile for a call that runs once. */
  reconcile?: undefined;
  /** Never set: no activity runs the call. */
  localActivity?: undefined;
  /** Never set: the workflow runs each call itself. */
  batched?: undefined;
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
   * workers (see `AgentWorkerOptions.worker.workflows`). Default: the conversation's own task queue.
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
  /** The name the model calls it by. */
  name: string;
  /** Its human-readable name. */
  label: string;
  /** What it does, as the model reads it. */
  description: string;
}

/** Where a tool's call runs when it is not an `execute` in an activity (`WorkflowTool.runner`). */
export type ToolRunner =
  /** A child conversation workflow with the agent's prompt and tools; its reply is the result. */
  | {
      kind: 'subAgent';
      /** The sub-agent: its name, prompt, tools and model. */
      agent: AgentDefinition;
    }
  /** The turn continues with the agent's prompt and tools; so do later turns. */
  | {
      kind: 'handoff';
      /** The agent that takes over. */
      agent: AgentDefinition;
    }
  /**
   * An attached client runs it (`Conversation.serveCallbacks`); the workflow waits for the result
   * durably, up to `timeout` (a Temporal duration string), and checks `output` against `outputSchema`.
   */
  | {
      kind: 'callback';
      /** How long the workflow waits for a client's result, e.g. `'10m'`. */
      timeout: string;
      /** JSON Schema the client's output must meet; absent: any output. */
      outputSchema?: JsonSchema;
    }
  /**
   * A Temporal Nexus operation of another namespace's service, which the workflow runs through
   * `endpoint` (made by `nexusTool`); the operation's output is the result.
   */
  | {
      kind: 'nexus';
      /** The Nexus endpoint registered on the server, which routes to the service's namespace. */
      endpoint: string;
      /** The Nexus service's name. */
      service: string;
      /** The operation of the service the call runs. */
      operation: string;
      /** The operation's end-to-end timeout (a Temporal duration string); absent: the server's maximum. */
      scheduleToCloseTimeout?: string;
    };
