import { msToNumber } from '@temporalio/common/lib/time.js';
import { isCancellation } from '@temporalio/workflow';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from '../src/contract/limits.ts';
import { toolCancelledMessage, toolErrorMessage, toolResultMessage } from '../src/contract/messages.ts';
import type { AgentActivities, PreparedToolCall } from '../src/contract/protocol.ts';
import { textContent } from '../src/contract/toolResult.ts';
import type { CallbackAnswer, CallbackToolResult, PendingCallback } from '../src/contract/types/callbacks.ts';
import type { ToolResultMessage } from '../src/contract/types/messages.ts';
import type { ToolRunner } from '../src/contract/types/tools.ts';
import { utf8Bytes } from '../src/contract/utf8.ts';
import { meteredActivities } from './actionMeter.ts';
import type { ConversationEvents } from './events.ts';
import { namedWait } from './webUiRows.ts';

const { checkCallbackOutput } = meteredActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: "check a client's callback result",
});

type ReadyCall = Extract<PreparedToolCall, { kind: 'ready' }>;

/**
 * Callback tool calls: the workflow publishes the request (`callbackRequested`), waits durably (a workflow timer) for an
 * attached client's `callbackResult` Update, and gives the model an error when none comes in time.
 */
export class CallbackCalls {
  readonly #pending: PendingCallback[] = [];
  readonly #answers = new Map<string, CallbackToolResult>();
  readonly #events: ConversationEvents;

  constructor(events: ConversationEvents) {
    this.#events = events;
  }

  /** Oldest first. */
  list(): PendingCallback[] {
    return [...this.#pending];
  }

  /** Why an answer cannot be taken, or `null` when it can (the Update's validator). */
  problem(answer: CallbackAnswer): string | null {
    if (typeof answer?.callId !== 'string' || typeof answer.result !== 'object' || answer.result === null) {
      return 'A callback result needs a callId and a result object';
    }
    if (!this.#pending.some((call) => call.callId === answer.callId) || this.#answers.has(answer.callId)) {
      const waiting = this.#pending.map((call) => call.callId).join(', ') || 'none';
      return `No callback call "${answer.callId}" is waiting for a result (waiting: ${waiting})`;
    }
    const { text } = answer.result;
    if (text !== undefined && typeof text !== 'string') return 'A callback result’s text must be a string';
    const bytes = utf8Bytes(JSON.stringify(answer.result));
    if (bytes > DEFAULT_MAX_TOOL_RESULT_BYTES) {
      return `A callback result may have at most ${DEFAULT_MAX_TOOL_RESULT_BYTES} bytes; this one has ${bytes}`;
    }
    return null;
  }

  answer(answer: CallbackAnswer): void {
    this.#answers.set(answer.callId, answer.result);
  }

  /** Publishes the call for clients and waits for its result (the tool batch publishes toolStart/toolEnd). */
  async run(
    call: ReadyCall,
    runner: Extract<ToolRunner, { kind: 'callback' }>,
    callId: string,
    turn: number,
  ): Promise<ToolResultMessage> {
    const { toolCallId, toolName } = call;
    const requestedAt = Date.now();
    const pending: PendingCallback = {
      callId,
      turn,
      toolCallId,
      toolName,
      args: call.args,
      requestedAt,
      expiresAt: requestedAt + msToNumber(runner.timeout),
    };
    this.#pending.push(pending);
    this.#events.publish(turn, { type: 'callbackRequested', callback: pending });
    let answered: boolean;
    try {
      answered = await namedWait(
        () => this.#answers.has(callId),
        `callback ${call.summary}: waiting for a client · call ${callId}`,
        runner.timeout,
      );
    } catch (error) {
      if (!isCancellation(error)) throw error;
      return toolCancelledMessage(toolCallId, toolName);
    } finally {
      this.#pending.splice(this.#pending.indexOf(pending), 1);
    }
    const result = this.#answers.get(callId);
    this.#answers.delete(callId);
    return answered && result
      ? await this.#resultMessage(call, runner, result)
      : toolErrorMessage(
          toolCallId,
          toolName,
          `Tool "${toolName}" runs on the user's client, and no client answered within ${runner.timeout}: ` +
            'probably none that serves it is attached. Tell the user, or try again later.',
        );
  }

  async #resultMessage(
    call: ReadyCall,
    runner: Extract<ToolRunner, { kind: 'callback' }>,
    result: CallbackToolResult,
  ) {
    const { toolCallId, toolName } = call;
    if (!result.isError && runner.outputSchema) {
      const problem = await checkCallbackOutput({
        toolName,
        schema: runner.outputSchema,
        output: result.output,
      });
      if (problem) return toolErrorMessage(toolCallId, toolName, problem);
    }
    const text = result.text ?? JSON.stringify(result.output ?? null);
    const details = result.output === undefined ? {} : { output: result.output };
    return toolResultMessage(
      toolCallId,
      toolName,
      { content: [textContent(text)], details },
      result.isError === true,
    );
  }
}
