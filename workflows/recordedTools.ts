import { patched } from '@temporalio/workflow';
import { answersFromRecord, recordedAnswer } from '../src/contract/evals.ts';
import { toolResultMessage } from '../src/contract/messages.ts';
import type { PreparedToolCall } from '../src/contract/protocol.ts';
import { toolEndText } from '../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../src/contract/types/messages.ts';
import type { ConversationState } from './state.ts';
import { markCall } from './webUiRows.ts';

type ReadyCall = Extract<PreparedToolCall, { kind: 'ready' }>;

/**
 * Since this patch an eval's conversation (`ConversationOptions.recordedTools`) answers tool calls
 * from the kept conversation instead of running them. Conversations without the option never ask.
 */
const RECORDED_TOOLS_PATCH = 'yiem-eval-recorded-tools';

/** How often each recorded call has answered, per conversation: a repeated call takes the next one. */
const uses = new WeakMap<ConversationState, number[]>();

/**
 * The result of a call an eval's conversation answers from its record (no activity, no side
 * effect), or `undefined` for a call that runs. Its `details.yiemEval` says whether the result was
 * recorded, a stand-in, or the call diverged from the kept conversation.
 */
export function answerFromRecord(state: ConversationState, call: ReadyCall): ToolResultMessage | undefined {
  const recorded = state.settings.recordedTools;
  if (!recorded || !answersFromRecord(recorded, call.atMostOnce === true)) return undefined;
  if (!patched(RECORDED_TOOLS_PATCH)) return undefined;
  let used = uses.get(state);
  if (!used) {
    used = [];
    uses.set(state, used);
  }
  const answer = recordedAnswer(recorded, used, call.toolName, call.args);
  const message = toolResultMessage(call.toolCallId, call.toolName, answer, answer.isError);
  const { toolCallId, toolName, summary } = call;
  state.events.publish(state.turn, { type: 'toolStart', toolCallId, toolName, summary });
  state.events.publish(state.turn, {
    type: 'toolEnd',
    toolCallId,
    toolName,
    isError: message.isError,
    willRetry: false,
    text: toolEndText(message.content),
  });
  markCall(`${answer.kind}: ${summary}`);
  return message;
}
