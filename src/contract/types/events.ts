/**
 * Events (layer 6): what a worker reports to its event sink, and what a conversation publishes to
 * its event log, with the seed ↔ pi-agent-core ↔ yiem name table ("The event vocabulary").
 */

import type { ApprovalOutcome, PendingApproval } from './approvals.ts';
import type { ToolArguments } from './base.ts';
import type { PendingCallback } from './callbacks.ts';
import type { Compaction } from './compaction.ts';
import type { GuardrailStage, GuardrailTrip } from './guardrails.ts';
import type { MessageDelivery } from './messages.ts';
import type { ModelFallback } from './models.ts';
import type { Spend } from './spend.ts';
import type { AgentToolResult, InterruptedCallOutcome } from './tools.ts';
import type { TurnResult, TurnStop } from './turns.ts';

/*
 * The event vocabulary
 * ====================
 * Two streams, both described here and nowhere else:
 * - `AgentEvent`: what a worker reports to its `eventSink` (`AgentWorkerOptions.hooks.eventSink`), on the
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
