import { resultText } from '../src/toolResult.ts';
import type { ToolResultMessage } from '../src/types.ts';
import type { ConversationEvents } from './events.ts';

/** A tool call's outcome as the turn needs it. */
export interface ToolOutcome {
  message: ToolResultMessage;
  terminate: boolean;
}

/** The `toolEnd` event of a call the workflow ran itself (a sub-agent, a handoff, a callback). */
export function publishToolEnd(events: ConversationEvents, turn: number, message: ToolResultMessage): void {
  const line = resultText(message.content).split('\n')[0] ?? '';
  events.publish(turn, {
    type: 'toolEnd',
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    isError: message.isError,
    text: line.length > 200 ? `${line.slice(0, 199)}…` : line,
  });
}
