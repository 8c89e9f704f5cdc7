import { resultText } from '../contract/toolResult.ts';
import type { TurnStarts } from '../contract/transcript.ts';
import type { Message } from '../contract/types/messages.ts';
import type { ChatToolOutput } from './uiMessageChunks.ts';

/**
 * A finished part of a conversation as the AI SDK's `UIMessage`s, the shape `useChat` takes as its
 * first messages: the console opens a conversation with them, and the running turn then streams in
 * (`resume`) as the chat endpoint's replay builds it.
 */
export type ConsoleUiMessage =
  | { id: string; role: 'user'; parts: { type: 'text'; text: string }[] }
  | { id: string; role: 'assistant'; parts: ConsoleAssistantPart[] };

export type ConsoleAssistantPart =
  | { type: 'step-start' }
  | { type: 'text'; text: string; state: 'done' }
  | {
      type: `tool-${string}`;
      /** The model's id made unique in the turn, as the chat endpoint's stream names it. */
      toolCallId: string;
      state: 'output-available';
      input: unknown;
      output: ChatToolOutput;
    }
  | { type: `tool-${string}`; toolCallId: string; state: 'output-error'; input: unknown; errorText: string };

/**
 * The id of turn `turn`'s assistant message, the one the chat endpoint's stream gives it too, so a
 * replayed turn replaces the message instead of adding another.
 */
export function turnMessageId(conversationId: string, turn: number): string {
  return `${conversationId}-turn-${turn}`;
}

/**
 * `messages` (the transcript from index `firstIndex` on) as UI messages: each user message its own,
 * each turn's model replies and tool results one assistant message, a step per model reply.
 */
export function transcriptUiMessages(
  conversationId: string,
  messages: readonly Message[],
  starts: TurnStarts | undefined,
  firstIndex = 0,
): ConsoleUiMessage[] {
  const shown: ConsoleUiMessage[] = [];
  let assistant: Extract<ConsoleUiMessage, { role: 'assistant' }> | undefined;
  let partIds = new Set<string>();
  let turnOfAssistant: number | undefined;
  const inputs = new Map<string, { partId: string; input: unknown }[]>();
  messages.forEach((message, offset) => {
    const index = firstIndex + offset;
    if (message.role === 'user') {
      shown.push({
        id: `${conversationId}-message-${index}`,
        role: 'user',
        parts: [{ type: 'text', text: message.content }],
      });
      return;
    }
    const turn = turnAt(starts, index);
    if (!assistant || turn !== turnOfAssistant) {
      assistant = {
        id: turn === undefined ? `${conversationId}-message-${index}` : turnMessageId(conversationId, turn),
        role: 'assistant',
        parts: [],
      };
      turnOfAssistant = turn;
      partIds = new Set();
      inputs.clear();
      shown.push(assistant);
    }
    if (message.role === 'assistant') {
      assistant.parts.push({ type: 'step-start' });
      if (message.content) assistant.parts.push({ type: 'text', text: message.content, state: 'done' });
      for (const call of message.toolCalls) {
        // The chat endpoint's rule for repeated ids (`TurnTranslator`), so links and ids agree.
        let partId = call.id;
        for (let n = 2; partIds.has(partId); n++) partId = `${call.id}-${n}`;
        partIds.add(partId);
        inputs.set(call.id, [...(inputs.get(call.id) ?? []), { partId, input: call.arguments }]);
      }
      return;
    }
    const call = inputs.get(message.toolCallId)?.shift() ?? { partId: message.toolCallId, input: {} };
    const text = resultText(message.content);
    assistant.parts.push(
      message.isError
        ? {
            type: `tool-${message.toolName}`,
            toolCallId: call.partId,
            state: 'output-error',
            input: call.input,
            errorText: text,
          }
        : {
            type: `tool-${message.toolName}`,
            toolCallId: call.partId,
            state: 'output-available',
            input: call.input,
            output: { text },
          },
    );
  });
  return shown;
}

/** The turn the message at `index` belongs to; undefined before the turns recorded where they began. */
function turnAt(starts: TurnStarts | undefined, index: number): number | undefined {
  if (!starts) return undefined;
  let turn: number | undefined;
  starts.starts.forEach((start, at) => {
    if (start <= index) turn = starts.firstTurn + at;
  });
  return turn;
}

/**
 * How much of the transcript the console shows before it follows the running turn live: up to the
 * turn's start and the user messages it began with, since the turn's replay rebuilds its reply.
 */
export function finishedLength(
  messages: readonly Message[],
  firstIndex: number,
  runningTurnStart: number | undefined,
): number {
  let end = runningTurnStart === undefined ? lastUserMessageIndex(messages, firstIndex) : runningTurnStart;
  while (messages[end - firstIndex]?.role === 'user') end += 1;
  return Math.max(firstIndex, end);
}

/** Without a recorded start, the running turn is taken to begin after the last user message. */
function lastUserMessageIndex(messages: readonly Message[], firstIndex: number): number {
  const at = messages.findLastIndex((message) => message.role === 'user');
  return at < 0 ? firstIndex + messages.length : firstIndex + at;
}
