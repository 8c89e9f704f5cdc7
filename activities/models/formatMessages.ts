import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { readByModel } from '../../src/contract/guardrails.ts';
import { resultText } from '../../src/contract/toolResult.ts';
import type { Message } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';

/**
 * The transcript in Chat Completions form (the seed's `formatMsgForLLM`), without the messages a
 * guardrail kept from the model.
 */
export function formatMessages(
  systemPrompt: string,
  messages: readonly Message[],
): ChatCompletionMessageParam[] {
  const formatted: ChatCompletionMessageParam[] = [];
  if (systemPrompt !== '') formatted.push({ role: 'system', content: systemPrompt });
  for (const message of messages) if (readByModel(message)) formatted.push(formatMessage(message));
  return formatted;
}

function formatMessage(message: Message): ChatCompletionMessageParam {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant':
      if (message.toolCalls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        })),
      };
    case 'toolResult':
      return { role: 'tool', tool_call_id: message.toolCallId, content: resultText(message.content) };
  }
}

/** The tools as Chat Completions function definitions. */
export function formatTools(tools: readonly AgentTool[]): ChatCompletionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  }));
}
