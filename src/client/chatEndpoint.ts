import type { IncomingMessage, ServerResponse } from 'node:http';
import { WorkflowNotFoundError } from '@temporalio/client';
import { MAX_CHAT_REQUEST_BYTES } from '../contract/limits.ts';
import { deliveryOptionsProblem } from '../contract/settings.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { ConversationStatus } from '../contract/types/conversation.ts';
import type { MessageDelivery } from '../contract/types/messages.ts';
import type { TurnResult } from '../contract/types/turns.ts';
import { utf8Bytes } from '../contract/utf8.ts';
import { TokenCheck } from '../infrastructure/httpAccess.ts';
import { chatStream, findTurnStart } from './chatStream.ts';
import type { AgentClient, Conversation, StartConversationOptions } from './client.ts';
import { QUERY_GRACE_MS, readServerRecord } from './serverRecord.ts';
import { UI_MESSAGE_STREAM_PROTOCOL, type UiMessageChunk } from './uiMessageChunks.ts';

/** Options of {@link createChatEndpoint}. */
export interface ChatEndpointOptions {
  /** The client the endpoint reaches conversations with (and decides approvals as). */
  client: AgentClient;
  /**
   * The conversation to start for a chat id that has none (the AI SDK's `useChat` makes up a new id
   * for each new chat); the conversation gets the chat's id. Without it, such a chat is answered 404.
   */
  newConversation?: (
    chatId: string,
  ) => Omit<StartConversationOptions, 'id'> | Promise<Omit<StartConversationOptions, 'id'>>;
  /**
   * When set, every request must carry `Authorization: Bearer <token>`; others get 401. Required by
   * `serveChatEndpoint` on any address but loopback.
   */
  token?: string;
  /** Largest request body accepted, in bytes. Default {@link MAX_CHAT_REQUEST_BYTES}. */
  maxRequestBytes?: number;
  /** How approvals decided through the endpoint name who decided. Default: the client's identity. */
  decider?: string;
}

/**
 * The chat endpoint, for Node's `http` and Express-style servers (`node`) and for fetch-style
 * runtimes (`fetch`). POST (any path) takes `useChat`'s request; GET `…/<chat id>/stream` resumes the
 * running turn (`DefaultChatTransport.reconnectToStream`), 204 when none runs.
 */
export interface ChatEndpoint {
  /** Answers a request of a fetch-style runtime (Hono, Bun, Deno, a Next.js route handler). */
  fetch(request: Request): Promise<Response>;
  /** Answers a request of Node's `http` or an Express-style server. */
  node(request: IncomingMessage & { body?: unknown }, response: ServerResponse): void;
}

/** A request as both adapters hand it over. */
interface ChatRequest {
  method: string;
  path: string;
  header(name: string): string | undefined;
  body(): Promise<unknown>;
  signal: AbortSignal;
}

type ChatReply =
  | { status: number; headers?: Record<string, string>; text: string }
  | { status: 200; stream: AsyncIterable<UiMessageChunk> };

/** A refusal with its HTTP status; its message is the response body. */
class ChatRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The parts of an AI SDK `UIMessage` the endpoint reads. */
interface UiMessage {
  id: string;
  role: string;
  parts: {
    type: string;
    text?: string;
    state?: string;
    approval?: { id: string; approved?: boolean; reason?: string };
  }[];
  metadata?: { yiem?: { conversationId?: string; turn?: number; offset?: number } };
}

const SSE_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  [UI_MESSAGE_STREAM_PROTOCOL.header]: UI_MESSAGE_STREAM_PROTOCOL.version,
  'x-accel-buffering': 'no',
};

const RESUME_PATH = /\/([^/]+)\/stream\/?$/;

/**
 * An HTTP endpoint speaking the AI SDK's UI message stream protocol (ai@6, `v1`), so that a web app's
 * `useChat` talks to durable conversations: the chat id is the conversation id, the last user
 * message is sent, approval answers in the messages are decided, and the turn streams back as
 * text, tool calls with inputs, progress and outputs, approval requests and errors.
 */
export function createChatEndpoint(options: ChatEndpointOptions): ChatEndpoint {
  const handler = new ChatHandler(options);
  return {
    fetch: (request) => serveFetch(handler, request),
    node: (request, response) => {
      serveNode(handler, request, response);
    },
  };
}

class ChatHandler {
  readonly #options: ChatEndpointOptions;
  readonly #maxBytes: number;
  readonly #tokenCheck: TokenCheck | undefined;
  /** Where turns started through this endpoint begin in their transcript, by `<conversation>/<turn>`. */
  readonly #turnStarts = new Map<string, number>();

  constructor(options: ChatEndpointOptions) {
    this.#options = options;
    this.#maxBytes = options.maxRequestBytes ?? MAX_CHAT_REQUEST_BYTES;
    if (options.token !== undefined && options.token.length === 0)
      throw new Error('The chat endpoint token is empty');
    this.#tokenCheck = options.token === undefined ? undefined : new TokenCheck(options.token);
  }

  get maxBytes(): number {
    return this.#maxBytes;
  }

  async handle(request: ChatRequest): Promise<ChatReply> {
    try {
      this.#authorize(request.header('authorization'));
      if (request.method === 'POST') return await this.#post(request);
      if (request.method === 'GET') {
        const resume = RESUME_PATH.exec(request.path);
        if (resume) return await this.#resume(decodeURIComponent(resume[1] as string), request.signal);
        throw new ChatRequestError(404, 'Not found: GET <endpoint>/<chat id>/stream resumes a chat');
      }
      throw new ChatRequestError(
        405,
        `${request.method} is not served: POST a chat request, or GET <chat id>/stream`,
      );
    } catch (error) {
      if (error instanceof ChatRequestError) {
        const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
        if (error.status === 401) headers['www-authenticate'] = 'Bearer';
        return { status: error.status, headers, text: error.message };
      }
      return {
        status: 500,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        text: describeThrown(error),
      };
    }
  }

  #authorize(header: string | undefined): void {
    if (this.#tokenCheck && !this.#tokenCheck.matchesBearer(header)) {
      throw new ChatRequestError(401, 'This chat endpoint needs `Authorization: Bearer <token>`');
    }
  }

  async #post(request: ChatRequest): Promise<ChatReply> {
    const contentType = request.header('content-type') ?? '';
    // A page of another origin can post text/plain without asking; JSON needs a preflight, which
    // this endpoint does not answer.
    if (!/^application\/json\b/i.test(contentType)) {
      throw new ChatRequestError(
        415,
        'A chat request is JSON: send it with `content-type: application/json`',
      );
    }
    const body = await request.body();
    const { chatId, messages, trigger, delivery } = chatRequestBody(body);
    if (trigger === 'regenerate-message') {
      throw new ChatRequestError(
        400,
        'A durable conversation keeps every reply: it cannot regenerate one. Send a new message instead.',
      );
    }
    const last = messages.at(-1) as UiMessage;
    const conversation = await this.#conversation(chatId, last.role === 'user');
    const status = await this.#status(conversation);
    const answered = await this.#decideApprovals(conversation, status, messages);
    if (last.role === 'user') return this.#send(conversation, last, delivery, request.signal);
    if (last.role !== 'assistant')
      throw new ChatRequestError(400, `The last message's role is "${last.role}": send a user message`);
    if (answered === 0) {
      throw new ChatRequestError(
        400,
        "The last message is the assistant's and answers no approval: send a user message",
      );
    }
    return this.#continue(conversation, last, request.signal);
  }

  async #conversation(chatId: string, mayStart: boolean): Promise<Conversation> {
    const { client, newConversation } = this.#options;
    const conversation = client.getConversation(chatId);
    try {
      const description = await conversation.handle.describe();
      // A query or message to a conversation no worker serves would wait for one for good.
      if (description.status.name === 'RUNNING')
        await client.workers?.require(description.taskQueue, chatId).catch((error: unknown) => {
          throw new ChatRequestError(503, describeThrown(error));
        });
      return conversation;
    } catch (error) {
      if (error instanceof ChatRequestError) throw error;
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      if (!newConversation || !mayStart)
        throw new ChatRequestError(404, `No conversation has the chat's id "${chatId}"`);
    }
    const settings = await newConversation(chatId);
    return client.startConversation({ ...settings, id: chatId }).catch((error: unknown) => {
      throw new ChatRequestError(
        400,
        `The conversation for chat "${chatId}" cannot start: ${describeThrown(error)}`,
      );
    });
  }

  async #status(conversation: Conversation): Promise<ConversationStatus> {
    const status = await statusOrNoWorker(conversation);
    if (status.state === 'ended')
      throw new ChatRequestError(409, `Conversation ${conversation.id} has ended`);
    return status;
  }

  /**
   * Decides the approvals the latest assistant message answers (`addToolApprovalResponse`) that
   * still wait. One settled meanwhile (by its timeout, another client) is left as it was: the stream
   * shows how it ended.
   */
  async #decideApprovals(
    conversation: Conversation,
    status: ConversationStatus,
    messages: UiMessage[],
  ): Promise<number> {
    const latest = messages.findLast((message) => message.role === 'assistant');
    const waiting = new Set(status.pendingApprovals.map((approval) => approval.approvalId));
    const decider = this.#options.decider ? { decider: this.#options.decider } : {};
    let answered = 0;
    for (const part of latest?.parts ?? []) {
      const approval = part.approval;
      if (part.state !== 'approval-responded' || !approval || typeof approval.approved !== 'boolean')
        continue;
      answered += 1;
      if (!waiting.has(approval.id)) continue;
      try {
        await (approval.approved
          ? conversation.approve(approval.id, decider)
          : conversation.deny(approval.id, approval.reason, decider));
      } catch (error) {
        const stillWaiting = (await conversation.status()).pendingApprovals.some(
          (pending) => pending.approvalId === approval.id,
        );
        if (stillWaiting) throw error;
      }
    }
    return answered;
  }

  async #send(
    conversation: Conversation,
    message: UiMessage,
    delivery: MessageDelivery | undefined,
    signal: AbortSignal,
  ): Promise<ChatReply> {
    const text = userText(message);
    // Read with (on old workers, before) the offset: every message of the turn to come is then at
    // or after this index.
    const status = await this.#status(conversation);
    if (status.pendingApprovals.length > 0) {
      const names = status.pendingApprovals.map(
        (approval) => `${approval.toolName} (${approval.approvalId})`,
      );
      throw new ChatRequestError(
        409,
        `The conversation waits for approval of ${names.join(', ')}: approve or deny first`,
      );
    }
    const replayFrom = status.eventOffset ?? (await conversation.eventOffset());
    const transcriptStart = status.state === 'idle' ? status.messageCount : undefined;
    let answered: (result: Promise<TurnResult>) => void = () => {};
    const answer = new Promise<TurnResult>((resolve) => {
      answered = resolve;
    });
    const following = new AbortController();
    const stop = (): void => following.abort();
    signal.addEventListener('abort', stop, { once: true });
    // Following starts before the message is sent: a model call scheduled while someone follows
    // sends its text live, not with its result.
    const stream = started(
      chatStream({
        conversation,
        replayFrom,
        emitFrom: replayFrom,
        ...(transcriptStart !== undefined ? { transcriptStart } : {}),
        answer,
        firstNewTurn: status.state === 'idle' ? status.turn + 1 : status.turn,
        nameMessage: true,
        signal: following.signal,
      }),
    );
    try {
      const update = await conversation.submit(text, {
        updateId: `chat-${conversation.id}-${message.id}`,
        ...(delivery ? { delivery } : {}),
      });
      answered(update.result());
    } catch (error) {
      stop();
      throw new ChatRequestError(400, describeThrown(error));
    }
    if (transcriptStart !== undefined)
      this.#remember(`${conversation.id}/${status.turn + 1}`, transcriptStart);
    return { status: 200, stream };
  }

  /** After approval answers: the turn goes on from where the previous response ended. */
  async #continue(conversation: Conversation, message: UiMessage, signal: AbortSignal): Promise<ChatReply> {
    const status = await conversation.status();
    const now = status.eventOffset ?? (await conversation.eventOffset());
    const resume = message.metadata?.yiem;
    const turn = resume?.conversationId === conversation.id && resume.turn ? resume.turn : status.turn;
    const emitFrom =
      resume?.conversationId === conversation.id && typeof resume.offset === 'number' ? resume.offset : now;
    return {
      status: 200,
      stream: chatStream({
        conversation,
        replayFrom: await findTurnStart(conversation, turn, Math.min(emitFrom, now)),
        emitFrom,
        ...this.#transcriptStart(conversation, turn),
        turn,
        nameMessage: false,
        signal,
      }),
    };
  }

  /** A reconnect replays the running turn from its start, so the client rebuilds its message whole. */
  async #resume(chatId: string, signal: AbortSignal): Promise<ChatReply> {
    const conversation = this.#options.client.getConversation(chatId);
    let status: ConversationStatus;
    try {
      status = await statusOrNoWorker(conversation);
    } catch (error) {
      // A new chat resumes on load too (`useChat({ resume: true })`) before its first message.
      if (error instanceof WorkflowNotFoundError) return { status: 204, text: '' };
      throw error;
    }
    if (status.state !== 'running') return { status: 204, text: '' };
    const replayFrom = await findTurnStart(
      conversation,
      status.turn,
      status.eventOffset ?? (await conversation.eventOffset()),
    );
    return {
      status: 200,
      stream: chatStream({
        conversation,
        replayFrom,
        emitFrom: replayFrom,
        ...this.#transcriptStart(conversation, status.turn),
        turn: status.turn,
        nameMessage: true,
        signal,
      }),
    };
  }

  #transcriptStart(conversation: Conversation, turn: number): { transcriptStart?: number } {
    const start = this.#turnStarts.get(`${conversation.id}/${turn}`);
    return start === undefined ? {} : { transcriptStart: start };
  }

  #remember(key: string, transcriptStart: number): void {
    this.#turnStarts.set(key, transcriptStart);
    // Oldest first: a long-lived endpoint keeps the starts of recent turns only.
    for (const old of this.#turnStarts.keys()) {
      if (this.#turnStarts.size <= REMEMBERED_TURNS) break;
      this.#turnStarts.delete(old);
    }
  }
}

/** `chunks` with its first step taken now: the stream starts following before anyone reads it. */
function started<T>(chunks: AsyncGenerator<T, void, undefined>): AsyncGenerator<T, void, undefined> {
  const first = chunks.next();
  // Read by the generator below; a stream nobody reads (the send failed) must not reject unheard.
  first.catch(() => {});
  return (async function* () {
    const head = await first;
    if (head.done) return;
    yield head.value;
    yield* chunks;
  })();
}

/** Turns whose transcript start an endpoint remembers, for replays that begin at the turn's start. */
const REMEMBERED_TURNS = 1_000;

/**
 * The fields of `useChat`'s request the endpoint reads; `delivery` (how the message joins a running
 * turn, `MessageDelivery`) is one a page adds with `sendMessage(message, { body: { delivery } })`.
 */
function chatRequestBody(body: unknown): {
  chatId: string;
  messages: UiMessage[];
  trigger: unknown;
  delivery?: MessageDelivery;
} {
  if (typeof body !== 'object' || body === null)
    throw new ChatRequestError(400, 'A chat request is a JSON object');
  const { id, messages, trigger, delivery } = body as Record<string, unknown>;
  const deliveryProblem = deliveryOptionsProblem({ delivery });
  if (deliveryProblem) throw new ChatRequestError(400, `A chat request's ${deliveryProblem}`);
  if (typeof id !== 'string' || id.length === 0 || id.length > 1000) {
    throw new ChatRequestError(400, 'A chat request needs `id`, the chat id (1 to 1000 characters)');
  }
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every(isUiMessage)) {
    throw new ChatRequestError(
      400,
      "A chat request needs `messages`, the chat's UI messages (`{ id, role, parts }`)",
    );
  }
  return { chatId: id, messages, trigger, ...(delivery ? { delivery: delivery as MessageDelivery } : {}) };
}

function isUiMessage(value: unknown): value is UiMessage {
  if (typeof value !== 'object' || value === null) return false;
  const { id, role, parts } = value as Record<string, unknown>;
  return (
    typeof id === 'string' &&
    typeof role === 'string' &&
    Array.isArray(parts) &&
    parts.every(
      (part) =>
        typeof part === 'object' && part !== null && typeof (part as { type?: unknown }).type === 'string',
    )
  );
}

function userText(message: UiMessage): string {
  if (message.parts.some((part) => part.type === 'file')) {
    throw new ChatRequestError(400, 'Files are not supported: a conversation takes text messages');
  }
  const text = message.parts
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
  if (text.trim() === '') throw new ChatRequestError(400, 'The user message has no text');
  return text;
}

/**
 * After this long without a chunk (a tool call may run for minutes) a comment goes out, which the
 * client's parser skips, so that proxies keep the stream open.
 */
const SSE_KEEP_ALIVE_MS = 15_000;

/** Server-sent events: one `data:` line per chunk, then `[DONE]`, as `ai`'s JsonToSseTransformStream writes them. */
async function* serverSentEvents(
  chunks: AsyncIterable<UiMessageChunk>,
): AsyncGenerator<string, void, undefined> {
  const iterator = chunks[Symbol.asyncIterator]();
  let next = iterator.next();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const quiet = new Promise<'quiet'>((resolve) => {
        timer = setTimeout(() => resolve('quiet'), SSE_KEEP_ALIVE_MS);
      });
      const outcome = await Promise.race([next, quiet]);
      clearTimeout(timer);
      if (outcome === 'quiet') {
        yield ': keep-alive\n\n';
        continue;
      }
      if (outcome.done) break;
      next = iterator.next();
      yield `data: ${JSON.stringify(outcome.value)}\n\n`;
    }
    yield 'data: [DONE]\n\n';
  } finally {
    // Not awaited: a chunk still awaited ends once the request's signal stops the stream.
    void iterator.return?.(undefined);
  }
}

async function serveFetch(handler: ChatHandler, request: Request): Promise<Response> {
  const reply = await handler.handle({
    method: request.method,
    path: new URL(request.url).pathname,
    header: (name) => request.headers.get(name) ?? undefined,
    body: async () => parseJson(await readLimited(request, handler.maxBytes)),
    signal: request.signal,
  });
  if ('text' in reply)
    return new Response(reply.status === 204 ? null : reply.text, {
      status: reply.status,
      headers: reply.headers ?? {},
    });
  const lines = serverSentEvents(reply.stream);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await lines.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

async function readLimited(request: Request, maxBytes: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const text = await request.text();
  if (utf8Bytes(text) > maxBytes) throw tooLarge(maxBytes);
  return text;
}

function serveNode(
  handler: ChatHandler,
  request: IncomingMessage & { body?: unknown },
  response: ServerResponse,
): void {
  const closed = new AbortController();
  response.on('close', () => closed.abort());
  const reply = handler.handle({
    method: request.method ?? 'GET',
    path: new URL(request.url ?? '/', 'http://localhost').pathname,
    header: (name) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    // An Express app with a body parser has read the body already (as JSON, or as text or bytes).
    body: async () => {
      const { body } = request;
      if (typeof body === 'string' || Buffer.isBuffer(body)) return parseJson(body.toString('utf8'));
      return body !== undefined ? body : parseJson(await readNodeBody(request, handler.maxBytes));
    },
    signal: closed.signal,
  });
  void reply
    .then(async (answer) => {
      if ('text' in answer) {
        response.writeHead(answer.status, answer.headers ?? {});
        response.end(answer.status === 204 ? undefined : answer.text);
        return;
      }
      response.writeHead(200, SSE_HEADERS);
      response.flushHeaders();
      for await (const line of serverSentEvents(answer.stream)) {
        if (closed.signal.aborted) break;
        if (!response.write(line)) await new Promise((resolve) => response.once('drain', resolve));
      }
      response.end();
    })
    .catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(response.headersSent ? undefined : describeThrown(error));
    });
}

function readNodeBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let bytes = 0;
    request.on('data', (part: Buffer) => {
      bytes += part.length;
      // Past the limit the rest is read and dropped, so that the refusal can still be answered.
      if (bytes > maxBytes) reject(tooLarge(maxBytes));
      else parts.push(part);
    });
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}

function tooLarge(maxBytes: number): ChatRequestError {
  return new ChatRequestError(413, `The chat request is larger than ${maxBytes} bytes`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ChatRequestError(400, `The chat request is not JSON: ${describeThrown(error)}`);
  }
}

/**
 * How long a request waits for the conversation's worker to answer its status: a running worker
 * answers in milliseconds (a chat's model calls run as activities, never inside a long workflow
 * task), while a query to a worker that was killed a moment ago waits ~30 s for the server to give up.
 */
const WORKER_STATUS_MS = 5_000;

/**
 * The conversation's status, or a 503 naming its task queue and the worker's last poll when no worker
 * answers within {@link WORKER_STATUS_MS}. The query is called off on the server soon after.
 */
async function statusOrNoWorker(conversation: Conversation): Promise<ConversationStatus> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), WORKER_STATUS_MS);
  });
  const { connection } = conversation.handle.client;
  const asked = connection.withDeadline(Date.now() + WORKER_STATUS_MS + QUERY_GRACE_MS, () =>
    conversation.status(),
  );
  try {
    const status = await Promise.race([asked, late]);
    if (status) return status;
  } finally {
    clearTimeout(timer);
  }
  const { noWorker } = await readServerRecord(conversation.handle);
  throw new ChatRequestError(503, `Conversation ${conversation.id} cannot answer now: ${noWorker}`);
}
