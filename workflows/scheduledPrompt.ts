import {
  ApplicationFailure,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { type ConversationWorkflow, endSignal, postSignal } from '../src/contract/definitions.ts';
import { YIEM_AGENT, YIEM_STATUS, YIEM_TURNS } from '../src/contract/searchAttributes.ts';
import { CONVERSATION_WORKFLOW_TASK_TIMEOUT } from '../src/contract/settings.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import type {
  ScheduledConversation,
  ScheduledPrompt,
  ScheduledPromptRun,
} from '../src/contract/types/conversation.ts';

/**
 * One run of a prompt schedule (a Temporal Schedule can only start workflows): posts the prompt to
 * its conversation, or starts a conversation for this run, sends the prompt, ends it after the reply
 * and returns that turn's result.
 */
export async function scheduledPromptWorkflow(prompt: ScheduledPrompt): Promise<ScheduledPromptRun> {
  if (prompt.conversationId) {
    await getExternalWorkflowHandle(prompt.conversationId)
      .signal(postSignal, prompt.text)
      .catch((error: unknown) => {
        throw ApplicationFailure.nonRetryable(
          `The scheduled prompt could not reach conversation ${prompt.conversationId}: ${describeThrown(error)}`,
          'ScheduledConversationUnreachable',
        );
      });
    return { conversationId: prompt.conversationId };
  }
  if (!prompt.newConversation) {
    throw ApplicationFailure.nonRetryable(
      'A scheduled prompt names neither a conversation nor a new conversation to start',
      'InvalidScheduledPrompt',
    );
  }
  return runInNewConversation(prompt.text, prompt.newConversation);
}

async function runInNewConversation(
  text: string,
  conversation: ScheduledConversation,
): Promise<ScheduledPromptRun> {
  // Schedules name each run `<schedule workflow id>-<time>`: the conversation is named after its run.
  const conversationId = `conversation-${workflowInfo().workflowId}`;
  const child = await startChild<ConversationWorkflow>('conversationWorkflow', {
    workflowId: conversationId,
    args: [conversation.options],
    staticSummary: conversation.title,
    workflowTaskTimeout: CONVERSATION_WORKFLOW_TASK_TIMEOUT,
    // The conversation outlives a run that is terminated: nothing said in it is lost.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    ...(conversation.searchable
      ? {
          typedSearchAttributes: [
            { key: YIEM_STATUS, value: 'idle' },
            { key: YIEM_TURNS, value: 0 },
            { key: YIEM_AGENT, value: conversation.agent },
          ],
        }
      : {}),
  });
  await child.signal(postSignal, text);
  await child.signal(endSignal);
  const summary = await child.result();
  return { conversationId, turn: summary.lastTurn ?? null };
}
