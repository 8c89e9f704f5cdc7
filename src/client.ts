import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import {
  cancelUpdate,
  endSignal,
  postSignal,
  promptUpdate,
  statusQuery,
  transcriptQuery,
} from '../workflows/definitions.ts';
import type { conversationWorkflow } from '../workflows/index.ts';
import { dataConverterFromEnv } from './codec/dataConverter.ts';
import { resolveTemporalConnection, type TemporalConnectionSettings } from './connection.ts';
import { type TracingOptions, tracingPlugins } from './tracing.ts';
import type {
  ConversationOptions,
  ConversationStatus,
  ConversationSummary,
  Message,
  TurnResult,
} from './types.ts';
import { DEFAULT_TASK_QUEUE } from './worker.ts';

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
}

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
    const { id = `conversation-${randomUUID()}`, ...conversationOptions } = options;
    const handle = await this.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      workflowId: id,
      taskQueue: this.taskQueue,
      args: [conversationOptions],
    });
    return new Conversation(handle);
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

  /** Ends the conversation after its pending messages, and waits until it has ended. */
  async end(): Promise<ConversationSummary> {
    await this.handle.signal(endSignal);
    return this.handle.result();
  }
}
