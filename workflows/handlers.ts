import { currentUpdateInfo, log, setHandler } from '@temporalio/workflow';
import {
  callbackResultUpdate,
  cancelUpdate,
  decideToolCallUpdate,
  endSignal,
  forwardedDecisionSignal,
  modelContextQuery,
  postSignal,
  promptUpdate,
  statusQuery,
  subAgentApprovalSignal,
  toolsUpdate,
  transcriptQuery,
  turnStartsQuery,
  upgradeSignal,
} from '../src/contract/definitions.ts';
import { deliveryOptionsProblem, promptOptionsProblem, userTextProblem } from '../src/contract/settings.ts';
import { transcriptPage } from '../src/contract/transcript.ts';
import type {
  ApprovalDecision,
  ApprovalOutcome,
  ApprovalWait,
  PendingApproval,
} from '../src/contract/types/approvals.ts';
import type { ConversationStatus } from '../src/contract/types/conversation.ts';
import { metered } from './actionMeter.ts';
import { registerCompactionHandlers } from './compaction.ts';
import { answerTo, takeMessage } from './delivery.ts';
import { promptRefusal, registerSafePointHandlers, safePointStatus } from './safePoint.ts';
import type { ConversationState } from './state.ts';
import { showForwardedApprovals } from './toolBatch.ts';
import { workerTools } from './workerActivities.ts';

/**
 * Registers the conversation's Updates, Signals and Queries (src/contract/definitions.ts) against
 * its state. The event log's poll Update is registered by `ConversationEvents` itself.
 */
export function registerHandlers(state: ConversationState): void {
  registerMessageHandlers(state);
  registerReadHandlers(state);
  registerSafePointHandlers(state);
  registerApprovalHandlers(state);
  registerCompactionHandlers(state);
  registerCallbackHandlers(state);
}

function registerMessageHandlers(state: ConversationState): void {
  const { settings } = state;
  // Messages: `prompt` waits for the result of the turn that answers it, `post` does not. Where
  // each goes while a turn runs, and the keys that add it once: workflows/delivery.ts.
  setHandler(
    promptUpdate,
    metered((text, options?) => answerTo(state, takeMessage(state, text, options, currentUpdateInfo()?.id))),
    {
      validator: (text, options?) => {
        if (state.ending) throw new Error('This conversation has ended; start a new one');
        const problem =
          promptRefusal(state) ??
          userTextProblem(text, settings.maxMessageBytes) ??
          promptOptionsProblem(options);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(
    postSignal,
    metered((text, options?) => {
      const problem = state.ending
        ? 'the conversation has ended'
        : (userTextProblem(text, settings.maxMessageBytes) ?? deliveryOptionsProblem(options));
      if (problem) log.warn('Ignored a posted message', { problem });
      else takeMessage(state, text, options);
    }),
  );
  setHandler(
    cancelUpdate,
    metered(() => {
      state.running?.cancel();
      return state.running !== undefined;
    }),
  );
  setHandler(
    endSignal,
    metered(() => {
      state.ending = true;
    }),
  );
  // Nothing to do: the workflow task it brings lets the loop see a new version (workflows/versionUpgrade.ts).
  setHandler(
    upgradeSignal,
    metered(() => {}),
  );
}

function registerReadHandlers(state: ConversationState): void {
  const { settings, approvals, forwarded, callbacks } = state;
  // Reading: the transcript, the status, the tools, and the model's context (read by the model activity).
  setHandler(transcriptQuery, (fromIndex = 0, maxBytes) =>
    transcriptPage(state.messages, fromIndex, maxBytes),
  );
  setHandler(statusQuery, (): ConversationStatus => {
    const pendingApprovals = [...approvals.list(), ...forwarded.list()];
    return {
      state: conversationState(state),
      turn: state.turn,
      messageCount: state.messages.length,
      pendingMessages: state.pending.length,
      toolExecution: settings.toolExecution,
      lastTurn: state.lastTurn,
      pendingApprovals,
      awaitingApproval: approvalWait(pendingApprovals),
      pendingCallbacks: callbacks.list(),
      answeredInPrepare: state.toolBatch?.answeredInPrepare ?? [],
      agent: state.agent?.name ?? null,
      ...safePointStatus(state),
      eventOffset: state.events.offset,
    };
  });
  setHandler(turnStartsQuery, () => state.turnStarts);
  setHandler(
    toolsUpdate,
    metered(() => workerTools()),
  );
  setHandler(modelContextQuery, (fromIndex, maxBytes) => ({
    systemPrompt: settings.systemPrompt,
    ...transcriptPage(state.messages, fromIndex, maxBytes),
  }));
}

function registerApprovalHandlers(state: ConversationState): void {
  const { approvals, forwarded } = state;
  // Approvals: this conversation's own, or a sub-agent's (forwarded), decided by a client here or,
  // for a sub-agent, passed down by its parent.
  const decide = async (decision: ApprovalDecision): Promise<ApprovalOutcome> =>
    forwarded.has(decision?.approvalId) ? forwarded.decide(decision) : approvals.decide(decision);
  const decisionProblem = (decision: ApprovalDecision): string | null =>
    forwarded.has(decision?.approvalId) ? null : approvals.problem(decision);
  setHandler(decideToolCallUpdate, metered(decide), {
    validator: (decision) => {
      const problem = decisionProblem(decision);
      if (problem) throw new Error(problem);
    },
  });
  setHandler(
    forwardedDecisionSignal,
    metered(async (decision: ApprovalDecision) => {
      const problem = decisionProblem(decision);
      if (problem) log.warn('Ignored a decision passed down by the parent', { problem });
      else await decide(decision);
    }),
  );
  setHandler(
    subAgentApprovalSignal,
    metered((message) => {
      forwarded.receive(message);
      showForwardedApprovals(state);
    }),
  );
}

function registerCallbackHandlers(state: ConversationState): void {
  const { callbacks } = state;
  // Callback tools: an attached client's result.
  setHandler(
    callbackResultUpdate,
    metered((answer) => callbacks.answer(answer)),
    {
      validator: (answer) => {
        const problem = callbacks.problem(answer);
        if (problem) throw new Error(problem);
      },
    },
  );
}

/** What `status()` says the conversation does: a stopped turn, a running one, a pause, its end, or idle. */
function conversationState(state: ConversationState): ConversationStatus['state'] {
  const stopped = state.control.stop?.stop.reason;
  if (stopped) return stopped;
  if (state.running) return 'running';
  if (state.control.pause) return 'paused';
  return state.ending && state.pending.length === 0 ? 'ended' : 'idle';
}

/** The approval wait that `pending` (a status's `pendingApprovals`) makes, or null when none waits. */
function approvalWait(pending: readonly PendingApproval[]): ApprovalWait | null {
  if (pending.length === 0) return null;
  const subAgents = pending.flatMap((approval) =>
    approval.subAgent ? [approval.subAgent.conversationId] : [],
  );
  return {
    ownCalls: pending.filter((approval) => !approval.subAgent).length,
    subAgents: [...new Set(subAgents)],
  };
}
