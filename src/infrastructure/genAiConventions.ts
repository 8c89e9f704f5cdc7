import type { Usage } from '../contract/types/base.ts';
import type { AssistantMessage } from '../contract/types/messages.ts';

/**
 * The OpenTelemetry GenAI semantic conventions' names (semconv `gen_ai.*`, v1.37) that yiem's spans
 * carry, and yiem's own beside them. One home for every span name and attribute key of the tracing.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
} as const;

/** yiem's attributes, for what the conventions have no name for. */
export const YIEM = {
  conversationId: 'yiem.conversation_id',
  turn: 'yiem.turn',
  turnStatus: 'yiem.turn.status',
  /** The Temporal Cloud Actions the turn used (src/contract/actions.ts), beside its tokens. */
  turnActions: 'yiem.turn.actions',
  model: 'yiem.model',
  toolName: 'yiem.tool.name',
  toolCallId: 'yiem.tool.call_id',
  /** The activity's attempt, 1 for the first: a retried call has a span per attempt. */
  attempt: 'yiem.attempt',
  /**
   * What the model call cost, in the currency of the worker's price table (`ModelSettings.prices`,
   * usually US dollars); absent without a price for the model.
   */
  cost: 'yiem.cost',
} as const;

/** `gen_ai.operation.name` values: a turn is an agent invocation, a model call a chat. */
export type GenAiOperation = 'invoke_agent' | 'chat' | 'execute_tool';

/** A span's name under the conventions: the operation, then what it acts on when known. */
export function genAiSpanName(operation: GenAiOperation, target: string | undefined): string {
  return target ? `${operation} ${target}` : operation;
}

/** The conventions' finish reasons for the model reply's stop reason. */
const FINISH_REASONS = {
  stop: 'stop',
  toolCalls: 'tool_calls',
  length: 'length',
  other: 'other',
} as const;

/** A `chat` span's attributes from the model's reply: who answered, the tokens, why it stopped, the cost. */
export function chatReplyAttributes(reply: {
  model: string;
  usage: Usage | null;
  stopReason: AssistantMessage['stopReason'];
}): Record<string, string | number | string[]> {
  const { usage } = reply;
  return {
    [GEN_AI.responseModel]: reply.model,
    [GEN_AI.finishReasons]: [FINISH_REASONS[reply.stopReason]],
    ...(usage ? { [GEN_AI.inputTokens]: usage.inputTokens, [GEN_AI.outputTokens]: usage.outputTokens } : {}),
    ...(usage?.cost !== undefined ? { [YIEM.cost]: usage.cost } : {}),
  };
}
