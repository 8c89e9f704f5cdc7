import type { WorkflowClient, WorkflowHandle } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { ConversationWorkflow } from '../contract/definitions.ts';
import type { ConversationCarryOver } from '../contract/protocol.ts';
import {
  YIEM_AGENT,
  YIEM_COST,
  YIEM_FORKED_FROM,
  YIEM_STATUS,
  YIEM_TURNS,
} from '../contract/searchAttributes.ts';
import { CONVERSATION_WORKFLOW_TASK_TIMEOUT, conversationOptionsProblem } from '../contract/settings.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { ConversationOptions } from '../contract/types/conversation.ts';

/** Where a forked conversation came from: its search attribute, memo and Web UI details. */
export interface ForkOrigin {
  conversationId: string;
  runId: string;
  atTurn: number;
}

/** Everything a conversation workflow is started with. */
export interface ConversationStart {
  id: string;
  taskQueue: string;
  options: ConversationOptions;
  /** The Web UI's title. */
  title: string;
  /** The `YiemAgent` search attribute. */
  agent: string;
  /** Whether it starts with `YiemStatus`, `YiemTurns` and `YiemCost`, which the workflow keeps current. */
  liveSearchAttributes: boolean;
  /** The state it starts from (a fork's transcript); absent: a fresh conversation. */
  carried?: ConversationCarryOver;
  /** Set for a fork: the conversation it came from. */
  forkedFrom?: ForkOrigin;
}

/**
 * Starts a conversation workflow; fails if a conversation with that id already exists. A namespace
 * without yiem's search attributes still runs conversations, just unsearchable ones; one registered
 * before `YiemCost` or `YiemForkedFrom` existed runs them without those (a fork's memo still names
 * its source).
 */
export async function startConversationWorkflow(
  client: WorkflowClient,
  start: ConversationStart,
): Promise<WorkflowHandle<ConversationWorkflow>> {
  const invalid = conversationOptionsProblem(start.options);
  if (invalid) throw new Error(invalid);
  const agentOnly: SearchAttributePair[] = [{ key: YIEM_AGENT, value: start.agent }];
  // The workflow upserts only the attributes it was started with.
  const base: SearchAttributePair[] = start.liveSearchAttributes
    ? [
        { key: YIEM_STATUS, value: 'idle' },
        { key: YIEM_TURNS, value: start.carried?.turn ?? 0 },
        ...agentOnly,
      ]
    : agentOnly;
  const { forkedFrom } = start;
  // `YiemCost` and `YiemForkedFrom` came later than the others: a namespace may lack them.
  const withCost: SearchAttributePair[] = start.liveSearchAttributes
    ? [...base, { key: YIEM_COST, value: 0 }]
    : base;
  const attributeSets: SearchAttributePair[][] = forkedFrom
    ? [[...withCost, { key: YIEM_FORKED_FROM, value: forkedFrom.conversationId }], withCost, base, []]
    : [withCost, base, []];
  const attempt = async ([attributes, ...fallbacks]: SearchAttributePair[][]): Promise<
    WorkflowHandle<ConversationWorkflow>
  > => {
    try {
      return await client.start<ConversationWorkflow>('conversationWorkflow', {
        workflowId: start.id,
        taskQueue: start.taskQueue,
        args: start.carried ? [start.options, start.carried] : [start.options],
        staticSummary: start.title,
        ...(forkedFrom
          ? {
              staticDetails: `Forked from conversation ${forkedFrom.conversationId} (run ${forkedFrom.runId}) at turn ${forkedFrom.atTurn}.`,
              memo: { yiemForkedFrom: forkedFrom },
            }
          : {}),
        workflowTaskTimeout: CONVERSATION_WORKFLOW_TASK_TIMEOUT,
        ...(attributes && attributes.length > 0 ? { typedSearchAttributes: attributes } : {}),
      });
    } catch (error) {
      if (fallbacks.length === 0 || !isUnregisteredSearchAttribute(error)) throw error;
      return attempt(fallbacks);
    }
  };
  return attempt(attributeSets);
}

/**
 * Whether the start failed for a search attribute the namespace lacks. The client wraps the server's
 * answer: since 1.23 its message is "Failed to start Workflow" and the server's words are in `cause`.
 */
function isUnregisteredSearchAttribute(error: unknown): boolean {
  for (let each: unknown = error, depth = 0; each !== undefined && depth < 5; depth++) {
    const message = describeThrown(each);
    if (
      /search attribute/i.test(message) &&
      /(not|un)\s*(defined|registered|known)|no mapping/i.test(message)
    )
      return true;
    each = each instanceof Error ? each.cause : undefined;
  }
  return false;
}
