import { randomUUID } from 'node:crypto';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { MAX_ARGUMENT_BYTES, MAX_ARGUMENT_DEPTH, SHOWN_ARGUMENT_CHARS } from '../../src/contract/limits.ts';
import { describeThrown } from '../../src/contract/thrown.ts';
import { truncate } from '../../src/contract/truncate.ts';
import type { ToolArguments, Usage } from '../../src/contract/types/base.ts';
import type { AgentToolCall, AssistantMessage } from '../../src/contract/types/messages.ts';
import { utf8Bytes } from '../../src/contract/utf8.ts';

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

/**
 * Arguments arrive as a JSON string or an object; anything else, and anything too large or too
 * deeply nested to carry through the workflow, becomes an error for the model.
 */
export function parseArguments(
  toolName: string,
  raw: unknown,
): { arguments: ToolArguments; argumentsError?: string } {
  if (raw === undefined || raw === null || raw === '') return { arguments: {} };
  const refuse = (argumentsError: string) => ({ arguments: {}, argumentsError });
  const tooDeep = `Arguments for "${toolName}" are nested more than ${MAX_ARGUMENT_DEPTH} levels deep; flatten them`;
  // Depth first: serialising a deeply nested object could overflow the stack.
  if (typeof raw === 'object' && exceedsDepth(raw, MAX_ARGUMENT_DEPTH)) return refuse(tooDeep);
  const text = typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? String(raw));
  const bytes = utf8Bytes(text);
  if (bytes > MAX_ARGUMENT_BYTES) {
    return refuse(
      `Arguments for "${toolName}" have ${bytes} bytes; at most ${MAX_ARGUMENT_BYTES} are accepted. Pass less data per call`,
    );
  }
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      const reason = describeThrown(error);
      return refuse(
        `Arguments for "${toolName}" are not valid JSON (${reason}). Received: ${truncate(raw, SHOWN_ARGUMENT_CHARS)}`,
      );
    }
  }
  if (!isPlainObject(value)) {
    return refuse(
      `Arguments for "${toolName}" must be a JSON object; received ${truncate(text, SHOWN_ARGUMENT_CHARS)}`,
    );
  }
  if (exceedsDepth(value, MAX_ARGUMENT_DEPTH)) return refuse(tooDeep);
  return { arguments: value };
}

/** Whether arrays and objects nest deeper than `limit`, walked without recursion. */
function exceedsDepth(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
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
