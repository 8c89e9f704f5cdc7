import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import {
  cancelUpdate,
  decideToolCallUpdate,
  endSignal,
  postSignal,
  promptUpdate,
  statusQuery,
  toolsUpdate,
  transcriptQuery,
} from '../workflows/definitions.ts';
import type { conversationWorkflow } from '../workflows/index.ts';
import { dataConverterFromEnv } from './codec/dataConverter.ts';
import { resolveTemporalConnection, type TemporalConnectionSettings } from './connection.ts';
import { type FollowEventsOptions, followEvents } from './conversationEvents.ts';
import { type ConversationSearchStatus, YIEM_AGENT, YIEM_STATUS, YIEM_TURNS } from './searchAttributes.ts';
import { DEFAULT_TASK_QUEUE } from './taskQueue.ts';
import { type TracingOptions, tracingPlugins } from './tracing.ts';
import type {
  ApprovalDecision,
  ApprovalOutcome,
  ConversationEventItem,
  ConversationOptions,
  ConversationStatus,
  ConversationSummary,
  Message,
  ToolInfo,
  TurnResult,
} from './types.ts';

/** How a client connects (see {@link TemporalConnectionSettings}) and where it starts conversations. */
export interface AgentClientOptions extends TemporalConnectionSettings {
  /** A Temporal client to reuse; otherwise one is made from the connection settings. */
  client?: Client;
  /** Default: env `YIEM_TASK_QUEUE`, else `yiem-agent`. */
  taskQueue?: string;
  /**
   * Must match the workers', e.g. `encryptedDataConverter(codec)` when payloads are encrypted.
   * Default: from `YIEM_CODEC_KEYS` / `YIEM_CODEC_KEY_FILE` like the worker. Only used without `client`.
   */
  dataConverter?: DataConverter;
  /** OpenTelemetry spans for starts, prompts and signals. Only used when `client` is not given. */
  tracing?: TracingOptions;
}

export interface StartConversationOptions extends ConversationOptions {
  /** The conversation id, which is also its workflow id. Default: `conversation-<uuid>`. */
  id?: string;
  /** The title the Temporal Web UI shows for it. Default: the agent and the system prompt's start. */
  title?: string;
  /** The `YiemAgent` search attribute. Default: the task queue. */
  agent?: string;
}

/** One row of `AgentClient.listConversations`. */
export interface ConversationListing {
  id: string;
  status: string | undefined;
  turns: number | undefined;
  agent: string | undefined;
  startTime: Date;
  /** The Temporal execution status (`RUNNING`, `COMPLETED`, ...). */
  executionStatus: string;
}

const TITLE_LENGTH = 80;

/** Starts and finds conversations. Every call goes through the Temporal client. */
export class AgentClient {
  readonly client: Client;
  readonly taskQueue: string;

  constructor(options: AgentClientOptions = {}) {
    this.client = options.client ?? newTemporalClient(options);
    this.taskQueue =
      options.taskQueue ?? ((options.env ?? process.env).YIEM_TASK_QUEUE || DEFAULT_TASK_QUEUE);
  }

  /** Starts a conversation workflow; fails if a conversation with that id already exists. */
  async startConversation(options: StartConversationOptions): Promise<Conversation> {
    const { id = `conversation-${randomUUID()}`, title, agent, ...conversationOptions } = options;
    const start = (searchable: boolean) =>
      this.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
        workflowId: id,
        taskQueue: this.taskQueue,
        args: [conversationOptions],
        staticSummary: title ?? defaultTitle(agent ?? this.taskQueue, conversationOptions.systemPrompt),
        ...(searchable
          ? {
              typedSearchAttributes: [
                { key: YIEM_STATUS, value: 'idle' },
                { key: YIEM_TURNS, value: 0 },
                { key: YIEM_AGENT, value: agent ?? this.taskQueue },
              ],
            }
          : {}),
      });
    // A namespace without yiem's search attributes still runs conversations, just unsearchable ones.
    const handle = await start(true).catch((error: unknown) => {
      if (!isUnregisteredSearchAttribute(error)) throw error;
      return start(false);
    });
    return new Conversation(handle);
  }

  /** Conversations on this client's namespace, newest first, optionally only those in one status. */
  async listConversations(
    options: { status?: ConversationSearchStatus; limit?: number } = {},
  ): Promise<ConversationListing[]> {
    const clauses = ["WorkflowType = 'conversationWorkflow'"];
    if (options.status) clauses.push(`YiemStatus = '${options.status}'`);
    const listings: ConversationListing[] = [];
    for await (const execution of this.client.workflow.list({ query: clauses.join(' AND ') })) {
      const attributes = execution.typedSearchAttributes;
      listings.push({
        id: execution.workflowId,
        status: attributes.get(YIEM_STATUS),
        turns: attributes.get(YIEM_TURNS),
        agent: attributes.get(YIEM_AGENT),
        startTime: execution.startTime,
        executionStatus: execution.status.name,
      });
      if (listings.length >= (options.limit ?? 100)) break;
    }
    return listings;
  }

  /** A handle on an existing conversation (no call is made until it is used). */
  getConversation(id: string): Conversation {
    return new Conversation(this.client.workflow.getHandle<typeof conversationWorkflow>(id));
  }

  /** Closes the connection this client opened. */
  async close(): Promise<void> {
    await this.client.connection.close();
  }
}

function newTemporalClient(options: AgentClientOptions): Client {
  const { connectionOptions, namespace } = resolveTemporalConnection(options);
  const dataConverter = options.dataConverter ?? dataConverterFromEnv(options.env ?? process.env);
  return new Client({
    connection: Connection.lazy(connectionOptions),
    namespace,
    ...(dataConverter ? { dataConverter } : {}),
    plugins: tracingPlugins(options.tracing),
  });
}

/** One conversation: send messages, read its transcript and status, end it. */
export class Conversation {
  readonly handle: WorkflowHandle<typeof conversationWorkflow>;

  constructor(handle: WorkflowHandle<typeof conversationWorkflow>) {
    this.handle = handle;
  }

  get id(): string {
    return this.handle.workflowId;
  }

  /** Sends a message and waits for the result of the turn that consumed it. */
  send(text: string): Promise<TurnResult> {
    return this.handle.executeUpdate(promptUpdate, { args: [text] });
  }

  /** Posts a message without waiting; it joins the next model call of this conversation. */
  async post(text: string): Promise<void> {
    await this.handle.signal(postSignal, text);
  }

  /**
   * Cancels the running turn: its tools are told to stop (`signal.aborted`), calls that did not finish
   * get a "cancelled" result, and the turn's `send` resolves with status `cancelled`. The conversation
   * then takes the next message. Resolves with whether a turn was running.
   */
  cancel(): Promise<boolean> {
    return this.handle.executeUpdate(cancelUpdate);
  }

  /** The transcript so far. */
  messages(): Promise<Message[]> {
    return this.handle.query(transcriptQuery);
  }

  status(): Promise<ConversationStatus> {
    return this.handle.query(statusQuery);
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
    return this.handle.executeUpdate(toolsUpdate);
  }

  /** The offset the next event will have: follow from here to see only what happens from now on. */
  eventOffset(): Promise<number> {
    return this.handle.query<number>('__temporal_workflow_stream_offset');
  }

  /** Lets a tool call that waits for approval run. Throws when no call with that id is waiting. */
  approve(toolCallId: string): Promise<ApprovalOutcome> {
    return this.#decide({ toolCallId, approve: true });
  }

  /** Refuses a tool call that waits for approval; the model gets the reason as the tool's error. */
  deny(toolCallId: string, reason?: string): Promise<ApprovalOutcome> {
    return this.#decide({ toolCallId, approve: false, ...(reason ? { reason } : {}) });
  }

  async #decide(decision: ApprovalDecision): Promise<ApprovalOutcome> {
    try {
      return await this.handle.executeUpdate(decideToolCallUpdate, { args: [decision] });
    } catch (error) {
      // The validator's reason is what the caller can act on, not the Update wrapper.
      if (error instanceof WorkflowUpdateFailedError && error.cause) throw new Error(error.cause.message);
      throw error;
    }
  }

  /** Ends the conversation after its pending messages, and waits until it has ended. */
  async end(): Promise<ConversationSummary> {
    await this.handle.signal(endSignal);
    return this.handle.result();
  }
}

function defaultTitle(agent: string, systemPrompt: string): string {
  const prompt = systemPrompt.replace(/\s+/g, ' ').trim();
  const title = `${agent} · ${prompt}`;
  return title.length <= TITLE_LENGTH ? title : `${title.slice(0, TITLE_LENGTH - 1)}…`;
}

function isUnregisteredSearchAttribute(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return (
    /search attribute/i.test(message) && /(not|un)\s*(defined|registered|known)|no mapping/i.test(message)
  );
}
