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
      /** The conversation (workflow id) whose turn called the tool. */
      conversationId: string;
      /** The model's id for the call, the same in every event of the call. */
      toolCallId: string;
      /** The tool called. */
      toolName: string;
      /** The arguments as PREPARE left them (after `prepareArguments` and `beforeToolCall`). */
      args: ToolArguments;
      /** The activity attempt, from 1: Temporal's retries of the call count up. */
      attempt: number;
    }
  /** The tool called `onPartialResult`; `partialResult` is its value, or `{ dropped }` when too large. */
  | {
      type: 'toolExecutionUpdate';
      /** The conversation (workflow id) whose turn called the tool. */
      conversationId: string;
      /** The model's id for the call, the same in every event of the call. */
      toolCallId: string;
      /** The tool called. */
      toolName: string;
      /** What the tool passed to `onPartialResult`. */
      partialResult: Record<string, unknown>;
      /** The activity attempt, from 1. */
      attempt: number;
    }
  /** The attempt ended, after FINALIZE (`afterToolCall`): `result` is what the model reads. */
  | {
      type: 'toolExecutionEnd';
      /** The conversation (workflow id) whose turn called the tool. */
      conversationId: string;
      /** The model's id for the call, the same in every event of the call. */
      toolCallId: string;
      /** The tool called. */
      toolName: string;
      /** The result the model reads, after `afterToolCall`. */
      result: AgentToolResult;
      /** True when the result is an error (thrown, timed out or blocked); the model reads it as such. */
      isError: boolean;
      /** The activity attempt, from 1. */
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
  /** The turn the event belongs to, from 1. */
  turn: number;
  /** The attempt of the activity that produced it, from 1 (1 for the workflow's own events). */
  attempt: number;
  /** Its position within that attempt, from 0: orders the events of one attempt. */
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
    | {
        type: 'messageStart';
        /** The model that answers (after routing and fallback). */
        model: string;
      }
    /**
     * The model asked for could not answer (down, timed out, 5xx, a 429 asking for a long wait) and
     * the call goes on to the next model of its fallback list; a `messageStart` of `to` follows.
     */
    | ({ type: 'modelFallback' } & ModelFallback)
    /** Text the model produced since the previous delta of the same attempt (batched). */
    | {
        type: 'textDelta';
        /** The new text, to append to the attempt's text so far. */
        text: string;
      }
    /** The attempt's message is complete; its text is what the deltas of this attempt add up to. */
    | {
        type: 'messageEnd';
        /** The tool calls the message asks for, in order (empty when it is the turn's answer). */
        toolCalls: {
          /** The call's id, as in its `toolStart` and `toolEnd`. */
          id: string;
          /** The tool asked for. */
          name: string;
        }[];
      }
    /**
     * A tool call's attempt starts (the worker's `toolExecutionStart`); a sub-agent, handoff,
     * callback or Nexus tool's call starts in the workflow. `summary` is the call in one line.
     */
    | {
        type: 'toolStart';
        /** The model's id for the call. */
        toolCallId: string;
        /** The tool called. */
        toolName: string;
        /** The call in one line, e.g. `lookup(city: "Paris")`, for a status line. */
        summary: string;
        /** Set when the call runs as a sub-agent: its child conversation, to follow for detail. */
        subAgent?: {
          /** The sub-agent's name. */
          agent: string;
          /** The child conversation's workflow id. */
          conversationId: string;
        };
      }
    /** The tool's `onPartialResult` (the worker's `toolExecutionUpdate`). */
    | {
        type: 'toolProgress';
        /** The call reporting progress. */
        toolCallId: string;
        /** The tool called. */
        toolName: string;
        /** What the tool passed to `onPartialResult`. */
        partialResult: Record<string, unknown>;
      }
    /**
     * A tool call's attempt ended; with `willRetry` it failed and runs again (a new `toolStart`).
     * `text` is the result's first line, cut short; the whole result is in the transcript.
     */
    | {
        type: 'toolEnd';
        /** The call that ended. */
        toolCallId: string;
        /** The tool called. */
        toolName: string;
        /** True when the result is an error the model reads as such. */
        isError: boolean;
        /** True when this attempt failed and Temporal runs the call again. */
        willRetry: boolean;
        /** The result's first line, cut short. */
        text: string;
        /** Set when an earlier attempt of this at-most-once call was interrupted (see `InterruptedCallOutcome`). */
        outcome?: InterruptedCallOutcome;
      }
    /** A tool call waits for a person's approval (a sub-agent's too). */
    | {
        type: 'approvalRequested';
        /** The call that waits, with the id to approve or deny it by. */
        approval: PendingApproval;
      }
    /** The approval was settled: by a person, by the timeout policy, or by a cancelled turn. */
    | {
        type: 'approvalResolved';
        /** Who decided what, and why. */
        outcome: ApprovalOutcome;
      }
    /** A callback tool's call waits for an attached client's result (`Conversation.serveCallbacks`). */
    | {
        type: 'callbackRequested';
        /** The call a client is to run. */
        callback: PendingCallback;
      }
    /** The model's calls from now on use this agent's system prompt, tools and model. */
    | {
        type: 'handoff';
        /** The agent handing over, or null for the conversation's own settings. */
        from: string | null;
        /** The agent taking over. */
        to: string;
      }
    /**
     * Messages `from` to `upTo - 1` were folded into the summary that model calls send instead of
     * the messages before `upTo` (`Conversation.compactions()` has the text); the transcript keeps them.
     */
    | {
        type: 'compaction';
        /** The compaction's number, from 1, as `Conversation.compactions()` lists it. */
        id: number;
        /** What started it: the context limit, or a request (`yiem compact`). */
        trigger: Compaction['trigger'];
        /** The first message folded in, from 0. */
        from: number;
        /** The message after the last folded in: model calls send the summary instead of the messages before it. */
        upTo: number;
      }
    /**
     * A guardrail rewrote the user's message (before the model read it), the reply or a tool result
     * (`toolCallId`); the transcript has the new text (see `GuardrailMark`).
     */
    | {
        type: 'guardrailRewrote';
        /** What was rewritten: the input, the output or a tool result. */
        stage: GuardrailStage;
        /** The guardrail's name. */
        guardrail: string;
        /** The call whose result was rewritten (stage `toolResult` only). */
        toolCallId?: string;
      }
    /** A guardrail tripped: the turn ends with status `guardrailTripped` (its `turnEnd` follows). */
    | ({ type: 'guardrailTripped' } & GuardrailTrip)
    /**
     * The turn stopped at a safe point (paused, or a limit reached) with what it had spent; it
     * continues after `turnResumed`, or ends (`turnEnd`) when cancelled.
     */
    | {
        type: 'turnStopped';
        /** Why it stopped: paused, or which limit it reached. */
        stop: TurnStop;
        /** What was spent when it stopped. */
        spend: {
          /** The whole conversation, this turn included. */
          conversation: Spend;
          /** This turn alone. */
          turn: Spend;
        };
      }
    /** The stopped turn continues. */
    | { type: 'turnResumed' }
    /**
     * A message was taken while turn `turn` ran (`text`: its first line, cut short);
     * `messageDelivered` says when a model call reads it. A message sent between turns opens the
     * next one, announced by its `turnStart` alone.
     */
    | {
        type: 'messageQueued';
        /** The message's number in the conversation, from 1; `messageDelivered` names it too. */
        messageId: number;
        /** How it joins the running turn. */
        delivery: MessageDelivery;
        /** Its first line, cut short. */
        text: string;
      }
    /**
     * A message queued while a turn ran joined turn `turn` after its `afterModelCall`-th model call
     * (0: it opened the turn, a follow-up); `interruptedCalls` counts the tool calls an `'interrupt'` message cancelled on its way.
     */
    | {
        type: 'messageDelivered';
        /** The message, as its `messageQueued` numbered it. */
        messageId: number;
        /** How it joined. */
        delivery: MessageDelivery;
        /** The model calls of the turn before it was read (0: it opened the turn). */
        afterModelCall: number;
        /** The tool calls an `'interrupt'` message cut short on its way; absent when none. */
        interruptedCalls?: number;
      }
    /** The turn ended: what `prompt` returns, and what the turn and the conversation have spent. */
    | {
        type: 'turnEnd';
        /** What `prompt` returns for the turn. */
        result: TurnResult;
        /** What the turn and the conversation have spent; absent in events logged before conversations tracked spend. */
        spend?: {
          /** The whole conversation, this turn included. */
          conversation: Spend;
          /** This turn alone. */
          turn: Spend;
        };
      }
  );

/**
 * An event with its offset in the conversation's event log: resume with `events({ fromOffset: offset + 1 })`.
 * A `live` item is an event of a model or tool call still running, read from the payload store's
 * live channel before the log takes it with the call's result: its `offset` is that of the log's
 * event before it, so resuming after it reads the log from there (and the call's events again, as
 * the log has them); following on, the log's copy of it is not yielded again.
 */
export type ConversationEventItem = ConversationEvent & {
  /** The event's position in the log, from 0. */
  offset: number;
  /** Set when read from the live channel before the log has it. */
  live?: true;
};
