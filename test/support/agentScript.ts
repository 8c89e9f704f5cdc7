import type { RecordedRequest, ScriptedModel, ScriptedReply } from '../../src/testing/index.ts';

/** Answers one model request of one agent; `toolResults` counts the tool results it has seen. */
export type AgentReplies = (
  request: RecordedRequest,
  toolResults: number,
) => ScriptedReply | Promise<ScriptedReply>;

/**
 * Routes each model request by its system prompt, so that agents whose calls run concurrently (sub-agents
 * in parallel mode) each get their own script, whatever order their requests arrive in.
 */
export function scriptAgents(model: ScriptedModel, agents: Record<string, AgentReplies>): void {
  model.respond((request) => {
    const system = systemPromptOf(request);
    const replies = agents[system];
    if (!replies) return { kind: 'error', status: 500, message: `no script for system prompt "${system}"` };
    const toolResults = request.body.messages.filter((message) => message.role === 'tool').length;
    return replies(request, toolResults);
  });
}

export function systemPromptOf(request: RecordedRequest): string {
  const first = request.body.messages[0];
  return first?.role === 'system' && typeof first.content === 'string' ? first.content : '';
}

/** The tool names a model request offered. */
export function offeredTools(request: RecordedRequest): string[] {
  return (request.body.tools ?? []).map((tool) => (tool.type === 'function' ? tool.function.name : ''));
}
