import {
  ApplicationFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
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
} from '../src/contract/definitions.ts';
import type { ConversationCarryOver, PendingMessage } from '../src/contract/protocol.ts';
import {
  conversationOptionsProblem,
  resolveConversationSettings,
  userTextProblem,
} from '../src/contract/settings.ts';
import { type TranscriptEntry, transcriptPage } from '../src/contract/transcript.ts';
import type {
  ApprovalDecision,
  ConversationOptions,
  ConversationStatus,
  ConversationSummary,
  TurnResult,
} from '../src/contract/types.ts';
import { Approvals } from './approvals.ts';
import { CallbackCalls } from './callbackTools.ts';
import { ConversationEvents } from './events.ts';
import { searchAttributeUpdater } from './searchAttributes.ts';
import { ForwardedApprovals, ParentLink } from './subAgentApprovals.ts';
import { toolRunners } from './toolRunners.ts';
import { runTurn, workerDefaultModel, workerTools } from './turn.ts';

/**
 * One conversation (its workflow id is the conversation id). Messages arrive by Update (`prompt`,
 * which waits for its turn's result) or Signal (`post`); each turn drains every pending message.
 * Between turns it may continue as a new run, handing its state over in `carried`.
 */
export async function conversationWorkflow(
  options: ConversationOptions,
  carried?: ConversationCarryOver,
): Promise<ConversationSummary> {
  const invalid = conversationOptionsProblem(options);
  if (invalid) throw ApplicationFailure.nonRetryable(invalid, 'InvalidConversationOptions');
  const settings = resolveConversationSettings(options);
  const conversationId = workflowInfo().workflowId;
  const messages: TranscriptEntry[] = carried?.messages ?? [];
  const pending: PendingMessage[] = carried?.pending ?? [];
  const resultsByMessage = new Map<number, TurnResult>();
  let nextMessageId = carried?.nextMessageId ?? 0;
  let turn = carried?.turn ?? 0;
  let turnsThisRun = 0;
  let running: CancellationScope | undefined;
  let ending = carried?.ending ?? false;
  let lastTurn: TurnResult | null = carried?.lastTurn ?? null;
  const events = new ConversationEvents(carried?.events);
  const approvals = new Approvals(settings.approval, events);
  // A sub-agent's approvals (and its own sub-agents') are decided on its parent.
  const parentConversation = carried?.parentConversation;
  const parentLink = parentConversation ? new ParentLink(parentConversation, conversationId) : undefined;
  const forwarded = new ForwardedApprovals(events, parentLink);
  const callbacks = new CallbackCalls(events);
  const agent = { current: carried?.agent };
  const runners = toolRunners({ conversationId, settings, events, forwarded, callbacks, agent });
  const updateSearchAttributes = searchAttributeUpdater();
  let workerModel: string | undefined;

  const enqueue = (text: string, awaited: boolean): number => {
    const id = nextMessageId++;
    pending.push({ id, text, timestamp: Date.now(), awaited });
    return id;
  };

  setHandler(
    promptUpdate,
    async (text) => {
      const id = enqueue(text, true);
      await condition(() => resultsByMessage.has(id));
      const result = resultsByMessage.get(id) as TurnResult;
      resultsByMessage.delete(id);
      return result;
    },
    {
      validator: (text) => {
        if (ending) throw new Error('This conversation has ended; start a new one');
        const problem = userTextProblem(text, settings.maxMessageBytes);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(postSignal, (text) => {
    const problem = ending ? 'the conversation has ended' : userTextProblem(text, settings.maxMessageBytes);
    if (problem) log.warn('Ignored a posted message', { problem });
    else enqueue(text, false);
  });
  setHandler(cancelUpdate, () => {
    running?.cancel();
    return running !== undefined;
  });
  setHandler(endSignal, () => {
    ending = true;
  });
  setHandler(transcriptQuery, (fromIndex = 0, maxBytes) => transcriptPage(messages, fromIndex, maxBytes));
  setHandler(
    statusQuery,
    (): ConversationStatus => ({
      state: running ? 'running' : ending && pending.length === 0 ? 'ended' : 'idle',
      turn,
      messageCount: messages.length,
      pendingMessages: pending.length,
      toolExecution: settings.toolExecution,
      lastTurn,
      pendingApprovals: [...approvals.list(), ...forwarded.list()],
      pendingCallbacks: callbacks.list(),
      agent: agent.current?.name ?? null,
    }),
  );
  setHandler(toolsUpdate, () => workerTools());
  const decide = async (decision: ApprovalDecision) =>
    forwarded.has(decision?.approvalId) ? forwarded.decide(decision) : approvals.decide(decision);
  const decisionProblem = (decision: ApprovalDecision): string | null =>
    forwarded.has(decision?.approvalId) ? null : approvals.problem(decision);
  setHandler(decideToolCallUpdate, decide, {
    validator: (decision) => {
      const problem = decisionProblem(decision);
      if (problem) throw new Error(problem);
    },
  });
  setHandler(forwardedDecisionSignal, async (decision) => {
    const problem = decisionProblem(decision);
    if (problem) log.warn('Ignored a decision passed down by the parent', { problem });
    else await decide(decision);
  });
  setHandler(subAgentApprovalSignal, (message) => forwarded.receive(message));
  setHandler(callbackResultUpdate, (answer) => callbacks.answer(answer), {
    validator: (answer) => {
      const problem = callbacks.problem(answer);
      if (problem) throw new Error(problem);
    },
  });
  setHandler(modelContextQuery, (fromIndex, maxBytes) => ({
    systemPrompt: settings.systemPrompt,
    ...transcriptPage(messages, fromIndex, maxBytes),
  }));

  // A waiting `prompt` is an unfinished handler, so its message always gets its turn in this run;
  // only posted messages are handed over.
  const newRunWanted = (): boolean =>
    workflowInfo().continueAsNewSuggested ||
    turnsThisRun >= (settings.maxTurnsPerRun ?? Number.POSITIVE_INFINITY);
  const newRunDue = (): boolean => newRunWanted() && allHandlersFinished();

  for (;;) {
    await condition(
      () => pending.length > 0 || ending || newRunDue() || (newRunWanted() && !events.detached),
    );
    if (pending.length === 0 && ending) break;
    // Followers' long polls are unfinished handlers too: let them go, or the run never moves on.
    if (newRunWanted() && !events.detached && pending.length === 0) {
      events.detachFollowers();
      continue;
    }
    if (newRunDue()) {
      await continueAsNew<typeof conversationWorkflow>(options, {
        messages,
        pending,
        nextMessageId,
        turn,
        lastTurn,
        ending,
        events: events.carryOver(),
        ...(agent.current ? { agent: agent.current } : {}),
        ...(parentConversation ? { parentConversation } : {}),
      });
    }
    turn += 1;
    turnsThisRun += 1;
    // Followers let go for a new run that a prompt then put off: they follow this turn here.
    if (events.detached) events.reattachFollowers();
    updateSearchAttributes('running', turn);
    running = new CancellationScope();
    workerModel ??= await workerDefaultModel(settings);
    events.publish(turn, { type: 'turnStart' });
    const consumed: number[] = [];
    const result = await running.run(() =>
      runTurn({
        conversationId,
        turn,
        settings,
        workerModel,
        messages,
        requestApproval: async (request) => {
          updateSearchAttributes('awaitingApproval', turn);
          const waiting = approvals.request(request);
          const asked = approvals.list().find((approval) => approval.approvalId === request.approvalId);
          if (asked) parentLink?.requested(asked);
          const outcome = await waiting;
          parentLink?.resolved(outcome);
          if (approvals.list().length === 0) updateSearchAttributes('running', turn);
          return outcome;
        },
        runners,
        publishFromResult: (heldBack, messageText) => events.publishFromResult(heldBack, messageText),
        followed: () => events.followed,
        drainPending: () => {
          for (const message of pending.splice(0)) {
            if (message.awaited) consumed.push(message.id);
            messages.push({ role: 'user', content: message.text, timestamp: message.timestamp });
          }
        },
      }),
    );
    running = undefined;
    lastTurn = result;
    events.publish(turn, { type: 'turnEnd', result });
    events.trim();
    updateSearchAttributes('idle', turn);
    for (const id of consumed) resultsByMessage.set(id, result);
  }
  updateSearchAttributes('ended', turn);
  events.detachFollowers();
  await condition(allHandlersFinished);
  return { turns: turn, messageCount: messages.length, lastTurn };
}
