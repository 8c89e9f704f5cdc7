import {
  QueryNotRegisteredError,
  QueryRejectedError,
  ServiceError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { describeThrown } from '../contract/thrown.ts';

/**
 * The errors a client throws in the caller's words: each names the conversation (or task queue) and
 * what to do, in `message`; the fields let a program tell them apart.
 */

/** No worker polls the task queue a conversation would run on, so it would wait for one forever. */
export class NoWorkerError extends Error {
  /** The class's name, so that a program can tell the error apart after serialisation too. */
  override readonly name = 'NoWorkerError';
  /** The task queue no worker polls. */
  readonly taskQueue: string;
  /** Task queues that have yiem workers now (the one meant, when it is a typo, is likely among them). */
  readonly queuesWithWorkers: string[];
  /** The conversation that would have waited; undefined for a new one. */
  readonly conversationId: string | undefined;

  constructor(taskQueue: string, queuesWithWorkers: string[], conversationId?: string) {
    super(noWorkerMessage(taskQueue, queuesWithWorkers, conversationId));
    this.taskQueue = taskQueue;
    this.queuesWithWorkers = queuesWithWorkers;
    this.conversationId = conversationId;
  }
}

function noWorkerMessage(taskQueue: string, queues: string[], conversationId: string | undefined): string {
  const what = conversationId ? `conversation ${conversationId}` : 'a new conversation';
  const others =
    queues.length > 0
      ? `Task queues with yiem workers: ${queues.map((queue) => `"${queue}"`).join(', ')}.`
      : 'No task queue has a yiem worker now.';
  return (
    `No worker polls task queue "${taskQueue}", so ${what} would wait there for one forever. ${others} ` +
    `Start a worker on it ("yiem worker --task-queue ${taskQueue}") or use a queue that has one ` +
    '(option taskQueue, env YIEM_TASK_QUEUE, or --task-queue).'
  );
}

/** What each Update asks of a conversation, as its refusal names it. */
const REQUESTS: Record<string, string> = {
  prompt: 'the message',
  pause: 'the pause',
  resume: 'the resume',
  raiseBudget: 'the budget change',
  compact: 'the compaction',
  decideToolCall: 'the decision',
  callbackResult: 'the callback result',
  cancel: 'the cancel',
  tools: 'the tool list',
};

/**
 * Every worker of a conversation's task queue stopped while a `send` waited for its turn. The message
 * was accepted: the turn runs once a worker polls the queue again, and `collect(turnId)` (or sending
 * again with the same key) waits for it then.
 */
export class WorkerStoppedError extends Error {
  /** The class's name, so that a program can tell the error apart after serialisation too. */
  override readonly name = 'WorkerStoppedError';
  /** The conversation whose turn waits. */
  readonly conversationId: string;
  /** Its task queue, where a worker is to be started. */
  readonly taskQueue: string;
  /** The `prompt` Update's id: the turn to collect once a worker runs again. */
  readonly turnId: string;
  /** When a worker last polled the queue. */
  readonly lastPoll: Date | undefined;

  constructor(conversationId: string, taskQueue: string, turnId: string, lastPoll: Date | undefined) {
    const since = lastPoll ? ` since ${lastPoll.toISOString()}` : '';
    super(
      `No worker on task queue "${taskQueue}"${since}: the worker of conversation ${conversationId} stopped while it answered. ` +
        `The message is kept and answered once a worker runs there again: start one ("yiem worker --task-queue ${taskQueue}"), ` +
        `then collect the turn ("yiem turns collect ${conversationId} ${turnId}", or collect("${turnId}")).`,
    );
    this.conversationId = conversationId;
    this.taskQueue = taskQueue;
    this.turnId = turnId;
    this.lastPoll = lastPoll;
  }
}

/**
 * The conversation refused or failed an Update (a message while paused with prompts "refuse", a
 * resume at an exhausted budget, an approval nothing waits for, …). `message` names the conversation
 * and the workflow's reason; `cause` stays the workflow's failure, as on Temporal's own error.
 */
export class ConversationRefusedError extends WorkflowUpdateFailedError {
  /** The class's name, so that a program can tell the error apart after serialisation too. */
  override readonly name = 'ConversationRefusedError';
  /** The conversation that refused. */
  readonly conversationId: string;
  /** The Update's name: `prompt`, `resume`, `decideToolCall`, … */
  readonly request: string;
  /** The workflow's reason, as its failure's message says it. */
  readonly reason: string;

  constructor(conversationId: string, request: string, cause: Error | undefined) {
    const reason = cause ? describeThrown(cause) : 'no reason given';
    super(`Conversation ${conversationId} refused ${REQUESTS[request] ?? request}: ${reason}`, cause);
    this.conversationId = conversationId;
    this.request = request;
    this.reason = reason;
  }
}

/** A read of a conversation (a Query) failed: the workflow's reason, or why no worker answered. */
export class ConversationQueryError extends Error {
  /** The class's name, so that a program can tell the error apart after serialisation too. */
  override readonly name = 'ConversationQueryError';
  /** The conversation read. */
  readonly conversationId: string;
  /** The Query's name: `status`, `messages`, … */
  readonly query: string;
  /** The workflow's reason, or why no worker answered. */
  readonly reason: string;

  constructor(conversationId: string, query: string, reason: string, cause?: unknown) {
    super(`Reading ${query} of conversation ${conversationId} failed: ${reason}`, { cause });
    this.conversationId = conversationId;
    this.query = query;
    this.reason = reason;
  }
}

/**
 * Temporal's Update and Query failures in the caller's words: the workflow's reason and the
 * conversation id in `message`. Anything else is returned as it is.
 */
export function inCallersWords(error: unknown, conversationId: string, call: string): unknown {
  if (error instanceof ConversationRefusedError || error instanceof ConversationQueryError) return error;
  if (error instanceof WorkflowUpdateFailedError) {
    return new ConversationRefusedError(conversationId, call, error.cause);
  }
  if (error instanceof QueryRejectedError) {
    return new ConversationQueryError(
      conversationId,
      call,
      `the conversation has ended (its status: ${String(error.status)})`,
      error,
    );
  }
  if (error instanceof QueryNotRegisteredError) {
    return new ConversationQueryError(
      conversationId,
      call,
      `its worker does not answer this query (${error.message}); is it of an older yiem release?`,
      error,
    );
  }
  if (isWorkflowTaskFailing(error)) {
    const reason = `its workflow task kept failing for ${WORKFLOW_TASK_RECOVERY_MS / 1000} s, so the server would not take the request; the worker's log says why (a bug, or a nondeterminism error after a change of workflow code: docs/troubleshooting.md)`;
    return new ConversationRefusedError(conversationId, call, new Error(reason, { cause: error }));
  }
  if (error instanceof ServiceError && error.message === 'Failed to query Workflow') {
    return new ConversationQueryError(conversationId, call, queryFailureReason(error.cause), error);
  }
  return error;
}

/** gRPC's FAILED_PRECONDITION, with the server's words for an Update refused while a workflow task fails. */
const FAILED_PRECONDITION = 9;
const WORKFLOW_TASK_FAILING = /Workflow Task in failed state/i;
/** How long an Update is sent again while the conversation's workflow task is failing. */
export const WORKFLOW_TASK_RECOVERY_MS = 15_000;

/** Whether the server refused an Update because the workflow's last task failed or timed out. */
export function isWorkflowTaskFailing(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 8; depth++) {
    const { code, details } = cause as { code?: unknown; details?: unknown };
    if (code === FAILED_PRECONDITION && WORKFLOW_TASK_FAILING.test(String(details ?? ''))) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** gRPC's DEADLINE_EXCEEDED: no worker answered the query in time. */
const DEADLINE_EXCEEDED = 4;

function queryFailureReason(cause: unknown): string {
  const { code, details } = (cause ?? {}) as { code?: unknown; details?: unknown };
  if (code === DEADLINE_EXCEEDED || /deadline|timeout|timed out/i.test(String(details ?? ''))) {
    return 'no worker answered (is a worker running on its task queue?)';
  }
  return typeof details === 'string' && details ? details : describeThrown(cause);
}
