import { randomUUID } from 'node:crypto';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { AgentToolCall, AssistantMessage, ToolArguments, Usage } from '../types.ts';

/**
 * Reads a Chat Completions reply into an assistant message. Tool calls come from the OpenAI
 * `tool_calls` field and from content blocks in the seed's other shapes (`{type:'tool_calls'}` and a
 * single `{type:'tool_call'}`), which some OpenAI-compatible providers send.
 */
export function parseAssistantMessage(completion: ChatCompletion, model: string): AssistantMessage {
  const choice = completion.choices[0];
  const message = choice?.message as (ChatCompletion.Choice['message'] & { content: unknown }) | undefined;
  const toolCalls: AgentToolCall[] = [];
  for (const call of message?.tool_calls ?? []) {
    if (call.type === 'function')
      toolCalls.push(toolCall(call.id, call.function.name, call.function.arguments));
  }
  const text: string[] = [];
  readContent(message?.content, text, toolCalls);
  return {
    role: 'assistant',
    content: text.join(''),
    toolCalls,
    model: completion.model || model,
    usage: readUsage(completion.usage),
    stopReason: stopReason(choice?.finish_reason, toolCalls.length > 0),
    timestamp: Date.now(),
  };
}

function readContent(content: unknown, text: string[], toolCalls: AgentToolCall[]): void {
  if (typeof content === 'string') {
    text.push(content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const block of content as Record<string, unknown>[]) {
    if (block?.type === 'text' && typeof block.text === 'string') text.push(block.text);
    if (block?.type === 'tool_calls' && Array.isArray(block.tool_calls)) {
      for (const call of block.tool_calls as Record<string, unknown>[]) toolCalls.push(blockToolCall(call));
    }
    if (block?.type === 'tool_call') toolCalls.push(blockToolCall(block));
  }
}

/** A tool call in either nested (`function: {name, arguments}`) or flat (`name, arguments`) shape. */
function blockToolCall(block: Record<string, unknown>): AgentToolCall {
  const fn = (block.function ?? block) as Record<string, unknown>;
  return toolCall(block.id, fn.name, fn.arguments);
}

function toolCall(id: unknown, name: unknown, rawArguments: unknown): AgentToolCall {
  const callId = typeof id === 'string' && id !== '' ? id : `call_${randomUUID()}`;
  const toolName = typeof name === 'string' ? name : '';
  const parsed = parseArguments(toolName, rawArguments);
  return { type: 'function', id: callId, name: toolName, ...parsed };
}

/** Arguments arrive as a JSON string or an object; anything else becomes an error for the model. */
export function parseArguments(
  toolName: string,
  raw: unknown,
): { arguments: ToolArguments; argumentsError?: string } {
  if (raw === undefined || raw === null || raw === '') return { arguments: {} };
  if (isPlainObject(raw)) return { arguments: raw };
  if (typeof raw !== 'string') {
    return {
      arguments: {},
      argumentsError: `Arguments for "${toolName}" must be a JSON object; received ${JSON.stringify(raw)}`,
    };
  }
  try {
    const value: unknown = JSON.parse(raw);
    if (isPlainObject(value)) return { arguments: value };
    return {
      arguments: {},
      argumentsError: `Arguments for "${toolName}" must be a JSON object; received ${raw}`,
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      arguments: {},
      argumentsError: `Arguments for "${toolName}" are not valid JSON (${reason}). Received: ${raw}`,
    };
  }
}

function isPlainObject(value: unknown): value is ToolArguments {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readUsage(usage: ChatCompletion['usage']): Usage | null {
  if (!usage) return null;
  return {
    inputTokens: usage.prompt_tokens,
    outputTokens: usage.completion_tokens,
    totalTokens: usage.total_tokens,
  };
}

function stopReason(finishReason: string | undefined, hasToolCalls: boolean): AssistantMessage['stopReason'] {
  if (hasToolCalls) return 'toolCalls';
  if (finishReason === 'stop') return 'stop';
  if (finishReason === 'length') return 'length';
  return 'other';
}
