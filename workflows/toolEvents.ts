import { toolEndText } from '../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../src/contract/types.ts';
import type { ConversationEvents } from './events.ts';

/** A tool call's outcome as the turn needs it. */
export interface ToolOutcome {
  message: ToolResultMessage;
  terminate: boolean;
}

/** The `toolEnd` event of a call the workflow ran itself (a sub-agent, a handoff, a callback). */
export function publishToolEnd(events: ConversationEvents, turn: number, message: ToolResultMessage): void {
  events.publish(turn, {
    type: 'toolEnd',
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    isError: message.isError,
    willRetry: false,
    text: toolEndText(message.content),
  });
}
