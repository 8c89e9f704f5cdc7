import { Context } from '@temporalio/activity';
import { type Client, WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import {
  type ConversationWorkflow,
  endSignal,
  postSignal,
  promptUpdate,
} from '../src/contract/definitions.ts';
import type { EvalCaseInput, EvalCaseRun, EvalTurnRun } from '../src/contract/evals.ts';
import { CONVERSATION_WORKFLOW_TASK_TIMEOUT } from '../src/contract/settings.ts';

/** How often a running case tells Temporal it is alive: well within its heartbeat timeout. */
const EVAL_HEARTBEAT_MS = 2_000;

/**
 * Replays one kept conversation's turns into a fresh conversation on the candidate's task queue.
 * Each message carries a key and each prompt an Update id derived from its turn, so an attempt that
 * follows a crashed one finds the conversation, and the turns it had sent are answered once.
 */
export async function runEvalCase(
  getClient: () => Promise<Client>,
  input: EvalCaseInput,
): Promise<EvalCaseRun> {
  const context = Context.current();
  const beat = setInterval(() => context.heartbeat(), EVAL_HEARTBEAT_MS);
  try {
    const client = await getClient();
    const handle = await startOrFind(client, input);
    const ended = (await handle.describe()).status.name !== 'RUNNING';
    const turns: EvalTurnRun[] = [];
    for (const [index, user] of input.turns.entries()) {
      if (ended) {
        turns.push({ result: null, latencyMs: null });
        continue;
      }
      const started = Date.now();
      const last = user.length - 1;
      for (const [each, text] of user.slice(0, last).entries())
        await handle.signal(postSignal, text, { key: `eval-${index}-${each}` });
      const result = await handle.executeUpdate(promptUpdate, {
        args: [user[last] ?? '', { key: `eval-${index}` }],
        updateId: `eval-${input.conversationId}-${index}`,
      });
      turns.push({ result, latencyMs: Date.now() - started });
    }
    if (!ended) await handle.signal(endSignal);
    const summary = await handle.result();
    return {
      caseId: input.caseId,
      conversationId: input.conversationId,
      turns,
      spend: summary.spend ?? null,
    };
  } finally {
    clearInterval(beat);
  }
}

/** The case's conversation: started now, or by an earlier attempt of this activity. */
async function startOrFind(
  client: Client,
  input: EvalCaseInput,
): Promise<WorkflowHandle<ConversationWorkflow>> {
  try {
    return await client.workflow.start<ConversationWorkflow>('conversationWorkflow', {
      workflowId: input.conversationId,
      taskQueue: input.taskQueue,
      args: [input.options],
      staticSummary: `eval of ${input.caseId}`,
      workflowTaskTimeout: CONVERSATION_WORKFLOW_TASK_TIMEOUT,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    return client.workflow.getHandle<ConversationWorkflow>(input.conversationId);
  }
}
