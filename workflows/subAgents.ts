import { CancellationScope, isCancellation, startChild, workflowInfo } from '@temporalio/workflow';
import { SUB_AGENT_SUMMARY_CHARS } from '../src/contract/limits.ts';
import { toolCancelledMessage, toolErrorMessage, toolResultMessage } from '../src/contract/messages.ts';
import type { ConversationCarryOver, PreparedToolCall } from '../src/contract/protocol.ts';
import { YIEM_AGENT, YIEM_COST, YIEM_STATUS, YIEM_TURNS } from '../src/contract/searchAttributes.ts';
import type { ConversationSettings } from '../src/contract/settings.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import { textContent } from '../src/contract/toolResult.ts';
import { truncate } from '../src/contract/truncate.ts';
import type { AgentDefinition } from '../src/contract/types/agents.ts';
import type { ConversationOptions, ConversationSummary } from '../src/contract/types/conversation.ts';
import type { ToolResultMessage } from '../src/contract/types/messages.ts';
import type { ForwardedApprovals } from './subAgentApprovals.ts';
import type { TurnControl } from './turnControl.ts';

type ReadyCall = Extract<PreparedToolCall, { kind: 'ready' }>;

/** What a sub-agent call needs from its conversation. */
export interface SubAgentContext {
  conversationId: string;
  settings: ConversationSettings;
  forwarded: ForwardedApprovals;
  /** The caller's budget: it bounds the sub-agent's, and the sub-agent's spend is added to it. */
  control: TurnControl;
}

/** The child conversation a sub-agent call runs as, for its `toolStart` event. */
export interface SubAgentStarted {
  agent: string;
  conversationId: string;
}

/**
 * Runs an agent tool's call as a child conversation workflow (the same workflow type, so the Web UI
 * shows it under the parent's Relationships) that starts with the task as its only message and ends
 * after answering it; the child's reply is the tool result. Started in the turn's cancellation
 * scope, so cancelling the turn cancels the child and waits for it to stop. `started` is called
 * once, as soon as the child exists (or, when it could not start, before this returns).
 */
export async function runSubAgent(
  context: SubAgentContext,
  call: ReadyCall,
  agent: AgentDefinition,
  callKey: string,
  turn: number,
  started: (subAgent: SubAgentStarted) => void,
): Promise<ToolResultMessage> {
  const { toolCallId, toolName } = call;
  const task = String(call.args.task ?? '');
  const workflowId = subAgentWorkflowId(context.conversationId, agent, turn, toolCallId, callKey);
  let announced = false;
  const announce = (): void => {
    if (announced) return;
    announced = true;
    started({ agent: agent.name, conversationId: workflowId });
  };
  context.forwarded.childStarted(workflowId, agent.name, turn);
  let message: ToolResultMessage;
  try {
    const child = await startChild('conversationWorkflow', {
      workflowId,
      args: [childOptions(context.settings, agent, context.control), firstTask(task, context.conversationId)],
      staticSummary: cut(`sub-agent ${agent.name}: ${task.trim().split('\n')[0]}`),
      ...childSearchAttributes(agent),
    });
    announce();
    const summary = (await child.result()) as ConversationSummary;
    context.control.subAgentSpent(summary.spend);
    const last = summary.lastTurn;
    const failed = !last || (last.status !== 'completed' && last.status !== 'terminated');
    const text = failed
      ? `Agent ${agent.name} did not finish (${last?.status ?? 'no turn'}): ${last?.error ?? 'no reply'}`
      : last.reply;
    const details = { agent: agent.name, conversationId: workflowId, status: last?.status ?? 'failed' };
    message = toolResultMessage(toolCallId, toolName, { content: [textContent(text)], details }, failed);
  } catch (error) {
    const cancelled = isCancellation(error) || CancellationScope.current().consideredCancelled;
    message = cancelled
      ? toolCancelledMessage(toolCallId, toolName)
      : toolErrorMessage(toolCallId, toolName, `Agent ${agent.name} failed: ${describeThrown(error)}`);
  } finally {
    context.forwarded.childEnded(workflowId);
  }
  announce();
  return message;
}

/**
 * `<parent>.<agent>.turn-<n>.<tool call id>`: readable in the Web UI and unique, since the call key
 * (the activity id an ordinary tool would get) is unique within the turn's batch.
 */
export function subAgentWorkflowId(
  parentId: string,
  agent: AgentDefinition,
  turn: number,
  toolCallId: string,
  callKey: string,
): string {
  const repeat = callKey.slice(`tool-${turn}-${toolCallId}`.length);
  return `${parentId}.${agent.name}.turn-${turn}.${toolCallId}${repeat}`;
}

/** The child's budget is the agent's own for a task, within what the caller has left. */
function childOptions(
  settings: ConversationSettings,
  agent: AgentDefinition,
  control: TurnControl,
): ConversationOptions {
  const model = agent.model ?? settings.model;
  const limits = control.subAgentLimits(agent.budget);
  return {
    ...(Object.keys(limits).length > 0 ? { budget: { conversation: limits } } : {}),
    systemPrompt: agent.systemPrompt,
    tools: agent.tools ?? [],
    toolExecution: settings.toolExecution,
    maxModelCallsPerTurn: agent.maxModelCallsPerTurn ?? settings.maxModelCallsPerTurn,
    modelPolicy: settings.modelPolicy,
    onApprovalTimeout: settings.approval.onTimeout,
    ...(model ? { model } : {}),
    ...(settings.approval.timeout ? { approvalTimeout: settings.approval.timeout } : {}),
    // Absent unless the agent names some, so children of histories from before guardrails start alike.
    ...(agent.guardrails ? { guardrails: agent.guardrails } : {}),
  };
}

/** A conversation whose only message is the task and which ends once it has answered it. */
function firstTask(task: string, parentConversation: string): ConversationCarryOver {
  return {
    messages: [],
    pending: [{ id: 0, text: task, timestamp: Date.now() }],
    nextMessageId: 1,
    turn: 0,
    lastTurn: null,
    ending: true,
    parentConversation,
  };
}

/**
 * Searchable like its parent, under the agent's name, when the namespace has yiem's attributes; with
 * live ones (`YiemStatus` and the rest) only when the parent has them (`liveSearchAttributes`).
 */
function childSearchAttributes(agent: AgentDefinition) {
  const parent = workflowInfo().typedSearchAttributes;
  if (parent.get(YIEM_AGENT) === undefined) return {};
  if (parent.get(YIEM_STATUS) === undefined)
    return { typedSearchAttributes: [{ key: YIEM_AGENT, value: agent.name }] };
  return {
    typedSearchAttributes: [
      { key: YIEM_STATUS, value: 'idle' },
      { key: YIEM_TURNS, value: 0 },
      { key: YIEM_AGENT, value: agent.name },
      ...(parent.get(YIEM_COST) === undefined ? [] : [{ key: YIEM_COST, value: 0 }]),
    ],
  };
}

function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return truncate(line, SUB_AGENT_SUMMARY_CHARS);
}
