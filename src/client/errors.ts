/**
 * The errors a client throws in the caller's words: each names the conversation (or task queue) and
 * what to do, in `message`; the fields let a program tell them apart.
 */

/** No worker polls the task queue a conversation would run on, so it would wait for one forever. */
export class NoWorkerError extends Error {
  override readonly name = 'NoWorkerError';
  readonly taskQueue: string;
  /** Task queues that have yiem workers now (the one meant, when it is a typo, is likely among them). */
  readonly queuesWithWorkers: string[];
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

/**
 * The conversation refused or failed an Update (a message while paused with prompts "refuse", a
 * resume at an exhausted budget, an approval nothing waits for, …): `reason` is the workflow's own.
 */
export class ConversationRefusedError extends Error {
  override readonly name = 'ConversationRefusedError';
  readonly conversationId: string;
  /** What was asked: `prompt`, `resume`, `decideToolCall`, … (the Update's name). */
  readonly request: string;
  readonly reason: string;
  /** The workflow's failure type (`ApplicationFailure.type`), when it gave one. */
  readonly type: string | undefined;

  constructor(conversationId: string, request: string, reason: string, type?: string, cause?: unknown) {
    super(`Conversation ${conversationId} refused ${request}: ${reason}`, { cause });
    this.conversationId = conversationId;
    this.request = request;
    this.reason = reason;
    this.type = type;
  }
}

/** A read of a conversation (a Query) failed: the workflow's reason, or why no worker answered. */
export class ConversationQueryError extends Error {
  override readonly name = 'ConversationQueryError';
  readonly conversationId: string;
  readonly query: string;
  readonly reason: string;

  constructor(conversationId: string, query: string, reason: string, cause?: unknown) {
    super(`Reading ${query} of conversation ${conversationId} failed: ${reason}`, { cause });
    this.conversationId = conversationId;
    this.query = query;
    this.reason = reason;
  }
}
