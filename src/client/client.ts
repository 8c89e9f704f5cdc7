import { randomBytes, randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  type WorkflowHandle,
  type WorkflowUpdateHandle,
  WorkflowUpdateStage,
} from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import {
  type ConversationWorkflow,
  callbackResultUpdate,
  cancelUpdate,
  compactionsQuery,
  compactUpdate,
  decideToolCallUpdate,
  endSignal,
  pauseUpdate,
  postSignal,
  promptUpdate,
  raiseBudgetUpdate,
  resumeUpdate,
  statusQuery,
  toolsUpdate,
  upgradeSignal,
} from '../contract/definitions.ts';
import { MAX_MESSAGE_BYTES_LIMIT } from '../contract/limits.ts';
import {
  type ConversationSearchStatus,
  YIEM_AGENT,
  YIEM_COST,
  YIEM_STATUS,
  YIEM_TURNS,
} from '../contract/searchAttributes.ts';
import { promptOptionsProblem, resolveConversationSettings, userTextProblem } from '../contract/settings.ts';
import { DEFAULT_TASK_QUEUE } from '../contract/taskQueue.ts';
import type { ApprovalDecision, ApprovalOutcome } from '../contract/types/approvals.ts';
import type { CallbackHandler, CallbackToolResult } from '../contract/types/callbacks.ts';
import type { Compaction } from '../contract/types/compaction.ts';
import type {
  ConversationOptions,
  ConversationStatus,
  ConversationSummary,
  ForkOptions,
  PauseOptions,
  PromptOptions,
  RewindOptions,
  RewindResult,
} from '../contract/types/conversation.ts';
import type { ConversationEventItem } from '../contract/types/events.ts';
import type { DeliveryOptions, Message } from '../contract/types/messages.ts';
import type { Budget, BudgetChange } from '../contract/types/spend.ts';
import type { ToolInfo } from '../contract/types/tools.ts';
import type { TurnResult } from '../contract/types/turns.ts';
import { dataConverterFromEnv } from '../infrastructure/codec/dataConverter.ts';
import {
  type ResolvedTemporalConnection,
  resolveTemporalConnection,
  type TemporalConnectionSettings,
} from '../infrastructure/connection.ts';
import { assertSupportedNode } from '../infrastructure/nodeVersion.ts';
import { type TracingOptions, tracingPlugins } from '../infrastructure/tracing.ts';
import { type ServeCallbacksOptions, serveCallbacks } from './callbackClient.ts';
import { type FollowEventsOptions, followEvents } from './conversationEvents.ts';
import { defaultTitle } from './conversationTitle.ts';
import { collectTurn, type DetachedTurn, listPromptTurns, type PromptTurn } from './detachedTurns.ts';
import { clientEnvironment } from './environment.ts';
import { inCallersWords, WorkerStoppedError } from './errors.ts';
import { forkConversation } from './fork.ts';
import { PayloadStoreCheck } from './payloadStoreCheck.ts';
import { namingAddress, throughFailingWorkflowTasks, unreachableServerHandling } from './reachability.ts';
import { rewindConversation } from './rewind.ts';
import { PromptSchedules } from './schedules.ts';
import {
  answerWithin,
  QUERY_GRACE_MS,
  readServerRecord,
  type ServerRecord,
  transcriptFromHistory,
  WORKER_ANSWER_MS,
} from './serverRecord.ts';
import { startConversationWorkflow } from './startConversation.ts';
import { readTranscript, resolveCompaction, type TranscriptRange } from './transcriptReader.ts';
import { untilUnanswered } from './workerAnswers.ts';
import { WorkerPresence } from './workerPresence.ts';

/** How a client connects (see {@link TemporalConnectionSettings}) and where it starts conversations. */
export interface AgentClientOptions extends TemporalConnectionSettings {
  /** A Temporal client to reuse; otherwise one is made from the connection settings. */
  client?: Client;
  /** Default: env `YIEM_TASK_QUEUE`, else `yiem-agent`. */
  taskQueue?: string;
  /**
   * Must match the workers' (the same payload store and keys), e.g.
   * `encryptedDataConverter(codec, payloadStorage())`. Default: `dataConverterFromEnv`, like the
   * worker. Only used without `client`; a given `client` needs the same converter.
   */
  dataConverter?: DataConverter;
  /** OpenTelemetry spans for starts, prompts and signals. Only used when `client` is not given. */
  tracing?: TracingOptions;
  /**
   * Before a conversation is started or sent a message, check (DescribeTaskQueue) that a worker
   * polls its task queue, and throw `NoWorkerError` when none does within a few seconds, rather than
   * wait for one forever (the default). `false`: start and send regardless, for a worker that comes later.
   */
  checkWorkers?: boolean;
}

export interface StartConversationOptions extends ConversationOptions {
  /** The conversation id, which is also its workflow id. Default: `conversation-<uuid>`. */
  id?: string;
  /** The title the Temporal Web UI shows for it. Default: the agent and the system prompt's start. */
  title?: string;
  /** The `YiemAgent` search attribute. Default: the task queue. */
  agent?: string;
  /**
   * Keep `YiemStatus`, `YiemTurns` and `YiemCost` current (the default). `false` starts the
   * conversation with `YiemAgent` alone and never upserts: each turn then costs two Temporal Cloud
   * Actions fewer, and the listing shows no status, turns or cost, so `listConversations({ status })`
   * and `yiem list --status` do not find it.
   */
  liveSearchAttributes?: boolean;
}

/** One row of `AgentClient.listConversations`. */
export interface ConversationListing {
  /** The conversation id (its workflow id). */
  id: string;
  /** `YiemStatus`: idle, running, awaitingApproval…; undefined on namespaces without the attribute. */
  status: string | undefined;
  /** `YiemTurns`: turns run so far, on namespaces that have the attribute. */
  turns: number | undefined;
  /** `YiemAgent`: the agent it runs as, on namespaces that have the attribute. */
  agent: string | undefined;
  /** `YiemCost`: what it has cost so far, on namespaces that have the attribute. */
  cost: number | undefined;
  /** When its first run started. */
  startTime: Date;
  /** The Temporal execution status (`RUNNING`, `COMPLETED`, ...). */
  executionStatus: string;
}

/** Options of `Conversation.approve` and `deny`. */
export interface DecisionOptions {
  /** How other clients name who decided. Default: this Temporal client's identity (`pid@host`). */
  decider?: string;
}

/** Starts and finds conversations. Every call goes through the Temporal client. */
export class AgentClient {
  /** The Temporal client every call goes through, for what this class does not wrap. */
  readonly client: Client;
  /** The task queue conversations are started on (their workers poll it). */
  readonly taskQueue: string;

  /** The address of the connection this client opened, for errors that name it. */
  readonly #address: string | undefined;
  /** Compares this client's payload store with the workers' before a message that would be stored. */
  readonly payloadStoreCheck: PayloadStoreCheck;
  /** Prompts sent on a timetable (Temporal Schedules), to an existing conversation or a new one per run. */
  readonly schedules: PromptSchedules;
  /** Whether workers poll a task queue; absent with `checkWorkers: false`. */
  readonly workers: WorkerPresence | undefined;

  constructor(options: AgentClientOptions = {}) {
    assertSupportedNode();
    let converter = options.dataConverter;
    if (options.client) {
      this.client = options.client;
      converter ??= options.client.options.dataConverter;
    } else {
      const { connectionOptions, namespace } = resolveTemporalConnection(options);
      this.#address = connectionOptions.address;
      converter ??= dataConverterFromEnv(clientEnvironment(options.env));
      this.client = newTemporalClient(converter, options, connectionOptions, namespace);
    }
    this.payloadStoreCheck = new PayloadStoreCheck(
      converter,
      this.client.workflowService,
      this.client.options.namespace,
    );
    this.taskQueue =
      options.taskQueue ?? (clientEnvironment(options.env).YIEM_TASK_QUEUE || DEFAULT_TASK_QUEUE);
    this.workers =
      options.checkWorkers === false
        ? undefined
        : new WorkerPresence(
            this.client.workflowService,
            this.client.options.namespace,
            this.client.workflow,
          );
    this.schedules = new PromptSchedules(this.client, this.taskQueue);
  }

  /**
   * Starts a conversation workflow; fails if a conversation with that id already exists, and, unless
   * `checkWorkers` is false, with `NoWorkerError` when no worker polls the task queue (nothing is started).
   */
  async startConversation(options: StartConversationOptions): Promise<Conversation> {
    const {
      id = `conversation-${randomUUID()}`,
      title,
      agent,
      liveSearchAttributes = true,
      ...conversationOptions
    } = options;
    await this.workers?.require(this.taskQueue);
    const handle = await startConversationWorkflow(this.client.workflow, {
      id,
      taskQueue: this.taskQueue,
      options: conversationOptions,
      title: title ?? defaultTitle(agent ?? this.taskQueue, conversationOptions.systemPrompt ?? ''),
      agent: agent ?? this.taskQueue,
      liveSearchAttributes,
    });
    return new Conversation(handle, {
      maxMessageBytes: resolveConversationSettings(conversationOptions).maxMessageBytes,
      payloadStoreCheck: this.payloadStoreCheck,
      taskQueue: this.taskQueue,
      ...(this.workers ? { workers: this.workers } : {}),
    });
  }

  /** Conversations on this client's namespace, newest first, optionally only those in one status. */
  async listConversations(
    options: { status?: ConversationSearchStatus; limit?: number } = {},
  ): Promise<ConversationListing[]> {
    const clauses = ["WorkflowType = 'conversationWorkflow'"];
    if (options.status) clauses.push(`YiemStatus = '${options.status}'`);
    // Visibility lists running executions first, then by close time, and SQL visibility has no
    // ORDER BY: every match is read, and the newest `limit` are kept.
    try {
      return await this.#listNewest(clauses.join(' AND '), options.limit ?? 100);
    } catch (error) {
      // Listing is no workflow call, so the client's interceptor does not name the address.
      throw this.#address ? namingAddress(error, this.#address) : error;
    }
  }

  async #listNewest(query: string, limit: number): Promise<ConversationListing[]> {
    let listings: ConversationListing[] = [];
    for await (const execution of this.client.workflow.list({ query })) {
      const attributes = execution.typedSearchAttributes;
      listings.push({
        id: execution.workflowId,
        status: attributes.get(YIEM_STATUS),
        turns: attributes.get(YIEM_TURNS),
        agent: attributes.get(YIEM_AGENT),
        cost: attributes.get(YIEM_COST),
        startTime: execution.startTime,
        executionStatus: execution.status.name,
      });
      if (listings.length >= 2 * limit) listings = newestFirst(listings, limit);
    }
    return newestFirst(listings, limit);
  }

  /**
   * After a deploy (Worker Versioning, docs/operations.md, "Safe deploys"): wakes every running conversation of
   * this task queue, so that the idle ones continue as new onto their deployment's current version
   * now; a running turn finishes on its version first. Resolves with how many were woken.
   */
  async upgradeConversations(): Promise<number> {
    const query = `WorkflowType = 'conversationWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${this.taskQueue}'`;
    let woken = 0;
    for await (const execution of this.client.workflow.list({ query })) {
      await this.client.workflow.getHandle(execution.workflowId).signal(upgradeSignal);
      woken++;
    }
    return woken;
  }

  /**
   * A handle on an existing conversation (no call is made until it is used). Give the conversation's
   * `maxMessageBytes` if it set one, so that oversized messages are refused here rather than by it.
   */
  getConversation(id: string, limits: ConversationLimits = {}): Conversation {
    return new Conversation(this.client.workflow.getHandle<ConversationWorkflow>(id), {
      payloadStoreCheck: this.payloadStoreCheck,
      ...(this.workers ? { workers: this.workers } : {}),
      ...limits,
    });
  }

  /** Closes the connection this client opened. */
  async close(): Promise<void> {
    await this.client.connection.close();
  }
}

function newestFirst(listings: ConversationListing[], limit: number): ConversationListing[] {
  return listings.sort((a, b) => b.startTime.getTime() - a.startTime.getTime()).slice(0, limit);
}

function newTemporalClient(
  dataConverter: DataConverter | undefined,
  options: AgentClientOptions,
  connectionOptions: ResolvedTemporalConnection['connectionOptions'],
  namespace: string,
): Client {
  const unreachable = unreachableServerHandling(connectionOptions.address);
  return new Client({
    connection: Connection.lazy({ ...connectionOptions, interceptors: unreachable.grpcInterceptors }),
    namespace,
    ...(dataConverter ? { dataConverter } : {}),
    interceptors: { workflow: [unreachable.workflowInterceptor] },
    plugins: tracingPlugins(options.tracing),
  });
}

/** What a client knows of a conversation's limits, to refuse a message before it is sent. */
export interface ConversationLimits {
  /** The conversation's `maxMessageBytes`. Default: the largest any conversation accepts. */
  maxMessageBytes?: number;
  /** Checks a message that would be stored against the workers' payload store before sending it. */
  payloadStoreCheck?: PayloadStoreCheck;
  /** The conversation's task queue, when known; else asked of the server when needed. */
  taskQueue?: string;
  /** Checks that a worker polls the conversation's task queue before a message is sent. */
  workers?: WorkerPresence;
}

/** How `Conversation.send` sends a message: its delivery, key and model, and the `prompt` Update's id. */
export interface SendOptions extends PromptOptions {
  /** The `prompt` Update's id; default: `key` when given, else a new one. It names the message too. */
  updateId?: string;
}

/**
 * The `prompt` and `post` arguments: the text alone when the options are the defaults, so the
 * message reaches workers from before deliveries and models as it always did.
 */
function messageArgs(text: string, options: PromptOptions): [string] | [string, PromptOptions] {
  const { delivery, key, model } = options;
  if ((delivery === undefined || delivery === 'steer') && key === undefined && model === undefined)
    return [text];
  return [text, { ...(delivery ? { delivery } : {}), ...(key ? { key } : {}), ...(model ? { model } : {}) }];
}

/**
 * An Update id of 96 random bits in 16 characters: Temporal writes a prompt's id four times into the
 * history, and its default (a UUID) takes 36.
 */
function shortUpdateId(): string {
  return randomBytes(12).toString('base64url');
}

/** One conversation: send messages, read its transcript and status, end it. */
export class Conversation {
  /** The conversation workflow's Temporal handle, for what this class does not wrap. */
  readonly handle: WorkflowHandle<ConversationWorkflow>;
  readonly #maxMessageBytes: number;
  readonly #payloadStoreCheck: PayloadStoreCheck | undefined;
  readonly #workers: WorkerPresence | undefined;
  #taskQueue: string | undefined;

  constructor(handle: WorkflowHandle<ConversationWorkflow>, limits: ConversationLimits = {}) {
    this.handle = handle;
    this.#maxMessageBytes = limits.maxMessageBytes ?? MAX_MESSAGE_BYTES_LIMIT;
    this.#payloadStoreCheck = limits.payloadStoreCheck;
    this.#taskQueue = limits.taskQueue;
    this.#workers = limits.workers;
  }

  /** The conversation id: its workflow id, the same across continue-as-new runs. */
  get id(): string {
    return this.handle.workflowId;
  }

  /**
   * Sends a message and waits for the result of the turn that consumed it. A message that is not a
   * non-empty string within the conversation's size limit is refused before anything is sent.
   * `delivery` says how it joins a turn that runs now (`MessageDelivery`: steer by default, or
   * `followUp`, or `interrupt`). Sending again with the same `updateId` or `key` (after a lost
   * connection, say) adds the message once and waits for the same turn. `model` picks this turn's
   * model by the worker's name for it (docs/models.md).
   */
  async send(text: string, options: SendOptions = {}): Promise<TurnResult> {
    const update = await this.submit(text, options);
    return this.#whileServed(update.updateId, update.result());
  }

  /**
   * `turn`, unless every worker of the conversation's queue stops before it ends: then a
   * `WorkerStoppedError` naming the queue, rather than a wait for as long as none runs.
   */
  async #whileServed(turnId: string, turn: Promise<TurnResult>): Promise<TurnResult> {
    const taskQueue = this.#taskQueue;
    if (!this.#workers || taskQueue === undefined) return turn;
    const watching = new AbortController();
    const gone = this.#workers.untilGone(taskQueue, watching.signal).then((lastPoll) => {
      if (watching.signal.aborted) return new Promise<never>(() => {});
      throw new WorkerStoppedError(this.id, taskQueue, turnId, lastPoll);
    });
    try {
      return await Promise.race([turn, gone]);
    } finally {
      watching.abort();
    }
  }

  /**
   * Sends a message like `send`, but resolves as soon as the conversation has accepted it (or throws
   * why it refused it); the handle's `result()` then waits for the turn that answers it.
   */
  async submit(text: string, options: SendOptions = {}): Promise<WorkflowUpdateHandle<TurnResult>> {
    this.#checkMessage(text, options);
    await this.#checkPayloadStore(text);
    await this.#checkWorkers();
    const { updateId = options.key, ...delivery } = options;
    // Accepted first, then the outcome polled: a re-sent UpdateWorkflowExecution (say after the client's
    // frontend died) is refused while the workflow task keeps failing, a poll of an accepted one is not.
    const update = await this.#update('prompt', () =>
      this.handle.startUpdate(promptUpdate, {
        args: messageArgs(text, delivery),
        updateId: updateId ?? shortUpdateId(),
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      }),
    );
    return { ...update, result: () => this.#words('prompt', update.result()) };
  }

  /** An Update, sent again while the conversation's workflow task is failing, its failure in the caller's words. */
  #update<T>(call: string, send: () => Promise<T>): Promise<T> {
    return this.#words(call, throughFailingWorkflowTasks(send));
  }

  /** A call's Update or Query failure in the caller's words (`ConversationRefusedError`, `ConversationQueryError`). */
  async #words<T>(call: string, pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (error) {
      throw inCallersWords(error, this.id, call);
    }
  }

  /**
   * Sends a message and returns once the conversation has accepted it, without waiting for its turn:
   * collect the turn's result later (from any process) with `collect(turnId)`, list the messages sent
   * so with `turns()`. Checked like `send`; sending again with the same `turnId` delivers it once.
   */
  async sendDetached(text: string, options: PromptOptions & { turnId?: string } = {}): Promise<DetachedTurn> {
    const { turnId, ...promptOptions } = options;
    const update = await this.submit(text, {
      ...promptOptions,
      updateId: turnId ?? `turn-${shortUpdateId()}`,
    });
    return { conversationId: this.id, turnId: update.updateId };
  }

  /**
   * The result of the turn that answers a message sent with `sendDetached` (or `send`): as the
   * history keeps it once answered, else waited for while the conversation's worker answers. When
   * none does (it stopped or was killed), a `WorkerStoppedError` within seconds naming the queue; the
   * message is kept and answered once a worker runs there again.
   */
  collect(turnId: string): Promise<TurnResult> {
    return collectTurn(this.handle, turnId, (turn) => this.#whileAnswered(turnId, turn));
  }

  /** `turn`, unless the conversation's worker stops answering first: then a `WorkerStoppedError`. */
  async #whileAnswered(turnId: string, turn: Promise<TurnResult>): Promise<TurnResult> {
    const watching = new AbortController();
    const gone = untilUnanswered((ms) => this.#statusQuery(ms), watching.signal).then(async () => {
      if (watching.signal.aborted) return new Promise<never>(() => {});
      const record = await readServerRecord(this.handle);
      throw new WorkerStoppedError(this.id, record.taskQueue, turnId, record.lastPoll);
    });
    try {
      return await Promise.race([turn, gone]);
    } finally {
      watching.abort();
    }
  }

  /** The messages sent by `send` or `sendDetached`, oldest first, with their turn's state and result. */
  turns(options: { limit?: number } = {}): Promise<PromptTurn[]> {
    return listPromptTurns(this.handle, options);
  }

  /**
   * Posts a message without waiting; it joins the next model call of this conversation, or as
   * `delivery` says (see `send`). Posting again with the same `key` adds it once. Refused here, like
   * `send`, when it is empty or too large: the conversation would drop it without a word.
   */
  async post(text: string, options: DeliveryOptions = {}): Promise<void> {
    this.#checkMessage(text, options);
    await this.#checkPayloadStore(text);
    await this.#checkWorkers();
    const [, given] = messageArgs(text, options);
    await (given ? this.handle.signal(postSignal, text, given) : this.handle.signal(postSignal, text));
  }

  /**
   * A message to a running conversation whose queue no worker polls would wait forever: refused
   * here, naming the queue. A conversation that is not found or has ended is left to the call.
   */
  async #checkWorkers(): Promise<void> {
    if (!this.#workers) return;
    if (this.#taskQueue === undefined) {
      const description = await this.handle.describe().catch(() => undefined);
      if (description?.status.name !== 'RUNNING') return;
      this.#taskQueue = description.taskQueue;
    }
    await this.#workers.require(this.#taskQueue, this.id);
  }

  async #checkPayloadStore(text: string): Promise<void> {
    const problem = await this.#payloadStoreCheck?.problem(text, async () => {
      this.#taskQueue ??= (await this.handle.describe()).taskQueue;
      return this.#taskQueue;
    });
    if (problem) throw new Error(problem);
  }

  #checkMessage(text: string, options: SendOptions = {}): void {
    const { updateId: _updateId, ...promptOptions } = options;
    const problem = userTextProblem(text, this.#maxMessageBytes) ?? promptOptionsProblem(promptOptions);
    if (problem) throw new Error(problem);
  }

  /**
   * Cancels the running turn: its tools are told to stop (`signal.aborted`), calls that did not finish
   * get a "cancelled" result, and the turn's `send` resolves with status `cancelled`. The conversation
   * then takes the next message. Resolves with whether a turn was running.
   */
  cancel(): Promise<boolean> {
    return this.#update('cancel', () => this.handle.executeUpdate(cancelUpdate));
  }

  /**
   * Pauses the conversation (an operator's stop): the running turn stops at its next safe point
   * (before a model call or a tool batch, never in the middle of one) and no new turn starts until
   * `resume()`. `prompts: 'queue'` (default) keeps accepting `send`, answered after the resume;
   * `'refuse'` refuses it with an error. Resolves with whether a turn was running.
   */
  pause(options: PauseOptions = {}): Promise<boolean> {
    return this.#update('pause', () => this.handle.executeUpdate(pauseUpdate, { args: [options] }));
  }

  /**
   * Lifts a pause and continues a turn stopped at a safe point where it stopped (after a pause, or
   * at its budget once `raiseBudget` made room). Resolves with that turn's result once it ends or
   * stops at its budget again; `null` when no turn was stopped or running. Throws while the stopped
   * turn's budget is still exhausted, naming the limit.
   */
  resume(): Promise<TurnResult | null> {
    return this.#update('resume', () => this.handle.executeUpdate(resumeUpdate));
  }

  /**
   * Changes the budget's limits: each given figure replaces its limit, `null` removes it. A turn
   * stopped at its budget stays stopped until `resume()`. Resolves with the budget now in force.
   */
  raiseBudget(change: BudgetChange): Promise<Budget> {
    return this.#update('raiseBudget', () =>
      this.handle.executeUpdate(raiseBudgetUpdate, { args: [change] }),
    );
  }

  /**
   * The transcript so far, or the part of it `range` names, with every message whole: the client
   * reads it a page at a time and fetches large messages from the payload store, so it needs the
   * workers' data converter (the same payload store and keys).
   */
  messages(range: TranscriptRange = {}): Promise<Message[]> {
    return this.#words('the transcript', readTranscript(this.handle, range));
  }

  /** The conversation's state, pending approvals and callbacks, spend and stop (the `status` query). */
  status(): Promise<ConversationStatus> {
    return this.#words('the status', this.handle.query(statusQuery));
  }

  /**
   * The status when a worker answers within a second; else what the server keeps of the
   * conversation (its execution, `YiemStatus`, `YiemTurns`, `YiemCost`) and why no worker answered.
   * A read that never waits on a worker that is gone.
   */
  async statusOrRecord(): Promise<
    | {
        /** The worker's answer. */
        status: ConversationStatus;
      }
    | {
        /** What the server keeps, with why no worker answered. */
        record: ServerRecord;
      }
  > {
    const status = await this.statusWithin();
    return status ? { status } : { record: await readServerRecord(this.handle) };
  }

  /**
   * The status when a worker answers within `ms`, else `undefined`; the query is called off soon
   * after, so asking again and again (a page that polls) leaves no query waiting on the server.
   */
  statusWithin(ms = WORKER_ANSWER_MS): Promise<ConversationStatus | undefined> {
    return answerWithin(this.#statusQuery(ms), ms);
  }

  /** The status query, called off on the server a little after `ms`: none is left waiting there. */
  #statusQuery(ms: number): Promise<ConversationStatus> {
    const { connection } = this.handle.client;
    return connection.withDeadline(Date.now() + ms + QUERY_GRACE_MS, () => this.status());
  }

  /**
   * The transcript (as `messages()`) when a worker answers within a second; else as the server's
   * history of the latest run records it, with `noWorker` saying why (see `transcriptFromHistory`).
   */
  async messagesOrHistory(range: TranscriptRange = {}): Promise<{
    /** The transcript's messages in the range. */
    messages: Message[];
    /** Set when they were read from the history: why no worker answered. */
    noWorker?: string;
  }> {
    if (await this.statusWithin()) return { messages: await this.messages(range) };
    const [record, all] = await Promise.all([
      readServerRecord(this.handle),
      transcriptFromHistory(this.handle),
    ]);
    const from = Math.max(0, range.fromIndex ?? 0);
    const messages = all.slice(from, range.limit === undefined ? undefined : from + range.limit);
    return { messages, noWorker: record.noWorker };
  }

  /**
   * The status and where the event log ends, read at one instant: one query (a billed Action) where
   * `eventOffset()` and `status()` are two. From a worker whose status has no `eventOffset` yet, it
   * takes three: the offset is read after a first status and before the status it returns, so a
   * follower from that offset misses nothing in between.
   */
  async statusAndOffset(): Promise<
    ConversationStatus & {
      /** Where the event log ends: follow from here to see what happens after this status. */
      eventOffset: number;
    }
  > {
    const status = await this.status();
    if (status.eventOffset !== undefined) return { ...status, eventOffset: status.eventOffset };
    const eventOffset = await this.eventOffset();
    return { ...(await this.status()), eventOffset };
  }

  /**
   * Compacts the context now: the turns before the latest `keepRecentTurns` are summarised (after the
   * running turn, if one runs), and model calls send the summary instead. Resolves with the
   * compaction, or `null` when there is nothing older to summarise. Throws for a conversation started
   * with `compaction: false`. The transcript keeps every message.
   */
  async compact(): Promise<Compaction | null> {
    const kept = await this.#update('compact', () => this.handle.executeUpdate(compactUpdate));
    return kept ? resolveCompaction(this.handle, kept) : null;
  }

  /**
   * The conversation's latest compactions, oldest first: which messages each summarised (`from` to
   * `upTo - 1`), why, and the summary. The latest is what model calls send instead of the messages
   * before its `upTo`.
   */
  async compactions(): Promise<Compaction[]> {
    const kept = await this.#words('the compactions', this.handle.query(compactionsQuery));
    return Promise.all(kept.map((compaction) => resolveCompaction(this.handle, compaction)));
  }

  /**
   * The conversation's events as they happen: turn starts and ends, streamed text, tool progress and
   * approvals. Ends when the conversation ends or `signal` aborts; resume after a disconnect with
   * `fromOffset: lastItem.offset + 1`.
   */
  events(options: FollowEventsOptions = {}): AsyncGenerator<ConversationEventItem, void, undefined> {
    return followEvents(this.handle, options);
  }

  /** The tools the conversation's workers serve. */
  tools(): Promise<ToolInfo[]> {
    return this.#update('tools', () => this.handle.executeUpdate(toolsUpdate));
  }

  /** The offset the next event will have: follow from here to see only what happens from now on. */
  eventOffset(): Promise<number> {
    return this.#words('the event offset', this.handle.query<number>('__temporal_workflow_stream_offset'));
  }

  /**
   * Lets a tool call that waits for approval run. `approvalId` is the pending approval's
   * `approvalId`, or its tool call id while no other waiting call has the same one. Throws when
   * nothing waiting matches, or the call was settled meanwhile (by its timeout).
   */
  approve(approvalId: string, options: DecisionOptions = {}): Promise<ApprovalOutcome> {
    return this.#decide({ approvalId, approve: true }, options);
  }

  /** Refuses a tool call that waits for approval (named as for `approve`); the model gets the reason. */
  deny(approvalId: string, reason?: string, options: DecisionOptions = {}): Promise<ApprovalOutcome> {
    return this.#decide({ approvalId, approve: false, ...(reason ? { reason } : {}) }, options);
  }

  #decide(decision: ApprovalDecision, options: DecisionOptions): Promise<ApprovalOutcome> {
    const decider = options.decider ?? this.handle.client.options.identity;
    return this.#update('decideToolCall', () =>
      this.handle.executeUpdate(decideToolCallUpdate, { args: [{ ...decision, decider }] }),
    );
  }

  /**
   * Runs the callback tools of this conversation on this client: `handlers` by tool name, until the
   * conversation ends or `options.signal` aborts. A handler's throw reaches the model as an error result.
   */
  serveCallbacks(handlers: Record<string, CallbackHandler>, options?: ServeCallbacksOptions): Promise<void> {
    return serveCallbacks(this, handlers, options);
  }

  /** Hands back one callback tool call's result. Throws when no call with that id waits (any more). */
  answerCallback(callId: string, result: CallbackToolResult): Promise<void> {
    return this.#update('callbackResult', () =>
      this.handle.executeUpdate(callbackResultUpdate, { args: [{ callId, result }] }),
    );
  }

  /**
   * The result of turn `turn`, waiting for it to end: for a turn no `send` waits for, such as a
   * fork's first turn or one started by posted messages. Read from the event log, which keeps the
   * latest turns; an older turn's result is in the transcript only.
   */
  async turnResult(turn: number, options: { signal?: AbortSignal } = {}): Promise<TurnResult> {
    const { lastTurn } = await this.status();
    if (lastTurn?.turn === turn) return lastTurn;
    for await (const item of this.events(options.signal ? { signal: options.signal } : {})) {
      if (item.type === 'turnEnd' && item.result.turn === turn) return item.result;
    }
    throw new Error(`Conversation ${this.id} ended, or following it stopped, before turn ${turn} ended`);
  }

  /**
   * Starts a new conversation from turn `atTurn` of this one (see {@link ForkOptions}): the
   * transcript before that turn, and that turn's user message, or `editMessage`, answered at once
   * as its turn `atTurn`; another model, system prompt or tool set if given. This conversation is
   * untouched. The fork names it in its `YiemForkedFrom` search attribute, memo and Web UI details.
   */
  async fork(options: ForkOptions): Promise<Conversation> {
    const started = await forkConversation(this.handle, options, async (text, taskQueue) => {
      const problem = await this.#payloadStoreCheck?.problem(text, async () => taskQueue);
      if (problem) throw new Error(problem);
    });
    return new Conversation(started.handle, {
      maxMessageBytes: resolveConversationSettings(started.options).maxMessageBytes,
      ...(this.#payloadStoreCheck ? { payloadStoreCheck: this.#payloadStoreCheck } : {}),
      taskQueue: started.taskQueue,
      ...(this.#workers ? { workers: this.#workers } : {}),
    });
  }

  /**
   * Resets this conversation in place (Temporal's workflow reset, a new run of the same id) to just
   * before turn `toTurn`. Discarded: that turn and every later one, and every message, Signal and
   * Update that reached the conversation after that point (a `send` waiting for one of them fails,
   * followers of its events must follow again from the start). Not undone: what the discarded tool
   * calls did outside the conversation. Messages that arrived while the previous turn still ran are
   * kept, and turn `toTurn` runs again on them (`requeuedMessages`).
   */
  rewind(options: RewindOptions): Promise<RewindResult> {
    return rewindConversation(this.handle, options);
  }

  /** Ends the conversation after its pending messages, and waits until it has ended. */
  async end(): Promise<ConversationSummary> {
    await this.handle.signal(endSignal);
    // From the latest run: a rewind ends the run a started handle is bound to by terminating it.
    return this.handle.client.getHandle<ConversationWorkflow>(this.id).result();
  }
}
