import { setCurrentDetails } from '@temporalio/workflow';
import type { ConversationState } from './state.ts';

/**
 * The workflow page's Current Details: what the conversation waits for and how to answer it. A
 * query answers it, so it costs no history; called whenever one of those changes.
 */
export function showCurrentDetails(state: ConversationState): void {
  const { conversationId } = state;
  const lines: string[] = [];
  for (const approval of [...state.approvals.list(), ...state.forwarded.list()]) {
    lines.push(
      `**Waiting for approval** of \`${approval.toolName}\`${approval.subAgent ? ` in sub-agent ${approval.subAgent.agent} (\`${approval.subAgent.conversationId}\`)` : ''}: ${approval.reason}. ` +
        `Answer with \`yiem approve ${conversationId} ${approval.approvalId}\` or \`yiem deny ${conversationId} ${approval.approvalId} --reason "…"\`.`,
    );
  }
  for (const callback of state.callbacks.list()) {
    lines.push(
      `**Waiting for a client** to run the callback tool \`${callback.toolName}\` (call \`${callback.callId}\`): ` +
        `attach one with \`yiem chat --id ${conversationId}\`.`,
    );
  }
  const { stop, pause } = state.control;
  if (stop?.stop.reason === 'budgetExhausted') {
    const { scope, limit, allowed } = stop.stop.exhausted;
    lines.push(
      `**Stopped at its budget** (the ${scope}'s ${limit} limit of ${allowed}): raise it and resume with \`yiem budget ${conversationId} --${scope} ${limit}=… --resume\`, or \`yiem cancel ${conversationId}\`.`,
    );
  } else if (pause) {
    lines.push(
      `**Paused** by an operator${state.running && !stop ? ': the running turn stops at its next safe point' : ''}; \`yiem resume ${conversationId}\` goes on.`,
    );
  }
  if (lines.length === 0) {
    lines.push(
      state.running
        ? `**Running** turn ${state.turn}.`
        : `**Idle**: waiting for the next prompt (\`yiem chat --id ${conversationId}\`).`,
    );
  }
  setCurrentDetails(lines.join('\n\n'));
}
