import { toolResultMessage } from '../src/contract/messages.ts';
import type { PreparedToolCall } from '../src/contract/protocol.ts';
import { textContent } from '../src/contract/toolResult.ts';
import type { AgentDefinition, ToolRunner } from '../src/contract/types.ts';
import type { CallbackCalls } from './callbackTools.ts';
import { emitAgentEvent } from './eventSink.ts';
import { runSubAgent, type SubAgentContext } from './subAgents.ts';
import { publishToolEnd, type ToolOutcome } from './toolEvents.ts';

type ReadyCall = Extract<PreparedToolCall, { kind: 'ready' }>;

/** Runs the calls of tools that have a `runner`: in the workflow, not in an `executeTool` activity. */
export interface ToolRunners {
  /** The agent a handoff made active, if any. */
  activeAgent(): AgentDefinition | undefined;
  run(call: ReadyCall & { runner: ToolRunner }, callKey: string, turn: number): Promise<ToolOutcome>;
}

export interface ToolRunnerContext extends SubAgentContext {
  callbacks: CallbackCalls;
  agent: { current: AgentDefinition | undefined };
}

export function toolRunners(context: ToolRunnerContext): ToolRunners {
  return {
    activeAgent: () => context.agent.current,
    run: async (call, callKey, turn) => {
      const { runner, toolCallId, toolName, args } = call;
      const event = { conversationId: context.conversationId, toolCallId, toolName, attempt: 1 };
      emitAgentEvent({ type: 'toolExecutionStart', ...event, args });
      const outcome =
        runner.kind === 'subAgent'
          ? await runSubAgent(context, call, runner, callKey, turn)
          : runner.kind === 'callback'
            ? await context.callbacks.run(call, runner, callKey, turn)
            : handOff(context, call, runner.agent, turn);
      const { content, details, isError } = outcome.message;
      const result = { content, details, usage: null, terminate: outcome.terminate };
      emitAgentEvent({ type: 'toolExecutionEnd', ...event, result, isError, willRetry: false });
      return outcome;
    },
  };
}

/** From the next model call on, the conversation speaks as `agent`. */
function handOff(
  context: ToolRunnerContext,
  call: ReadyCall,
  agent: AgentDefinition,
  turn: number,
): ToolOutcome {
  const { toolCallId, toolName } = call;
  context.events.publish(turn, { type: 'toolStart', toolCallId, toolName, summary: call.summary });
  const from = context.agent.current?.name ?? null;
  context.agent.current = agent;
  context.events.publish(turn, { type: 'handoff', from, to: agent.name });
  const message = toolResultMessage(
    toolCallId,
    toolName,
    {
      content: [textContent(`Transferred to ${agent.name}; you are now ${agent.name}.`)],
      details: { agent: agent.name },
    },
    false,
  );
  publishToolEnd(context.events, turn, message);
  return { message, terminate: false };
}
