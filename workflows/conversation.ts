import { allHandlersFinished, condition, log, setHandler, workflowInfo } from '@temporalio/workflow';
import type {
  ConversationOptions,
  ConversationStatus,
  ConversationSummary,
  Message,
  TurnResult,
} from '../src/types.ts';
import { Approvals } from './approvals.ts';
import {
  decideToolCallUpdate,
  endSignal,
  modelContextQuery,
  postSignal,
  promptUpdate,
  statusQuery,
  toolsUpdate,
  transcriptQuery,
} from './definitions.ts';
import { ConversationEvents } from './events.ts';
import { searchAttributeUpdater } from './searchAttributes.ts';
import { resolveConversationSettings, userTextProblem } from './settings.ts';
import { listTools, runTurn, workerDefaultModel } from './turn.ts';

interface PendingMessage {
  id: number;
  text: string;
  timestamp: number;
}

/**
 * One conversation (its workflow id is the conversation id). Messages arrive by Update (`prompt`,
 * which waits for its turn's result) or Signal (`post`); each turn drains every pending message.
 */
export async function conversationWorkflow(options: ConversationOptions): Promise<ConversationSummary> {
  const settings = resolveConversationSettings(options);
  const conversationId = workflowInfo().workflowId;
  const messages: Message[] = [];
  const pending: PendingMessage[] = [];
  const resultsByMessage = new Map<number, TurnResult>();
  let nextMessageId = 0;
  let turn = 0;
  let running = false;
  let ending = false;
  let lastTurn: TurnResult | null = null;
  const events = new ConversationEvents();
  const approvals = new Approvals(settings.approval, events);
  const updateSearchAttributes = searchAttributeUpdater();
  let workerModel: string | undefined;

  const enqueue = (text: string): number => {
    const id = nextMessageId++;
    pending.push({ id, text, timestamp: Date.now() });
    return id;
  };

  setHandler(
    promptUpdate,
    async (text) => {
      const id = enqueue(text);
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
    else enqueue(text);
  });
  setHandler(endSignal, () => {
    ending = true;
  });
  setHandler(transcriptQuery, () => messages);
  setHandler(
    statusQuery,
    (): ConversationStatus => ({
      state: running ? 'running' : ending && pending.length === 0 ? 'ended' : 'idle',
      turn,
      messageCount: messages.length,
      pendingMessages: pending.length,
      toolExecution: settings.toolExecution,
      lastTurn,
      pendingApprovals: approvals.list(),
    }),
  );
  setHandler(toolsUpdate, () => listTools());
  setHandler(decideToolCallUpdate, (decision) => approvals.decide(decision), {
    validator: (decision) => {
      const problem = approvals.problem(decision);
      if (problem) throw new Error(problem);
    },
  });
  setHandler(modelContextQuery, (fromIndex) => ({
    systemPrompt: settings.systemPrompt,
    messages: messages.slice(fromIndex),
    total: messages.length,
  }));

  for (;;) {
    await condition(() => pending.length > 0 || ending);
    if (pending.length === 0) break;
    turn += 1;
    running = true;
    // Before the local activity below: a first patched() call right after a local activity in the
    // same workflow task failed to replay (TMPRL1100) in test/integration/replay.test.ts.
    updateSearchAttributes('running', turn);
    workerModel ??= await workerDefaultModel(settings);
    events.publish(turn, { type: 'turnStart' });
    const consumed: number[] = [];
    const result = await runTurn({
      conversationId,
      turn,
      settings,
      workerModel,
      messages,
      requestApproval: async (request) => {
        updateSearchAttributes('awaitingApproval', turn);
        const outcome = await approvals.request(request);
        if (approvals.list().length === 0) updateSearchAttributes('running', turn);
        return outcome;
      },
      drainPending: () => {
        for (const message of pending.splice(0)) {
          consumed.push(message.id);
          messages.push({ role: 'user', content: message.text, timestamp: message.timestamp });
        }
      },
    });
    running = false;
    lastTurn = result;
    events.publish(turn, { type: 'turnEnd', result });
    updateSearchAttributes('idle', turn);
    for (const id of consumed) resultsByMessage.set(id, result);
  }
  updateSearchAttributes('ended', turn);
  events.detachFollowers();
  await condition(allHandlersFinished);
  return { turns: turn, messageCount: messages.length };
}
