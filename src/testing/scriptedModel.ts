/**
 * A scripted stand-in for an OpenAI-compatible model server.
 *
 * It speaks the Chat Completions wire format over real HTTP so that tests exercise the same client code
 * (the `openai` package, retries, timeouts, SSE parsing) that production uses; only the model's answers
 * are scripted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';

/** Fields every scripted reply may carry. */
export interface ScriptedReplyTiming {
  /** Wait this long before answering (headers included), to simulate model latency. */
  delayMs?: number;
  /** When streaming, wait this long before each delta, so a client sees the text arrive over time. */
  deltaDelayMs?: number;
  /**
   * When streaming, wait this long after the last text delta before the stream ends: a call whose
   * text a follower has seen whole while the call still runs.
   */
  finishDelayMs?: number;
  /**
   * When streaming, send this many deltas (the role delta included) and then destroy the socket: a
   * stream that dies half-way, as real providers' sometimes do.
   */
  dropAfterDeltas?: number;
}

/**
 * The token counts a reply reports (`usage`), for tests of what usage drives (prices, budgets);
 * without it they are estimated from the request's and the reply's length.
 */
export interface ScriptedUsage {
  /** `usage.prompt_tokens`. */
  promptTokens: number;
  /** `usage.completion_tokens`. */
  completionTokens: number;
}

/** The model answers with plain assistant text (finish_reason `stop`). */
export interface TextReply extends ScriptedReplyTiming {
  /** Which kind of reply this is. */
  kind: 'text';
  /** The reply's text (streamed in pieces when the client streams). */
  text: string;
  /** The usage it reports. Default: estimated. */
  usage?: ScriptedUsage;
}

/** One function call the model asks for. */
export interface ScriptedToolCall {
  /** Tool call id; `call_<n>` is generated when omitted. */
  id?: string;
  /** Function name. */
  name: string;
  /**
   * Function arguments. An object is JSON-stringified; a string is sent verbatim, so tests can send
   * malformed JSON the way real models sometimes do.
   */
  arguments: string | Record<string, unknown>;
}

/** The model asks for tool calls (`message.tool_calls`, finish_reason `tool_calls`), optionally with text. */
export interface ToolCallsReply extends ScriptedReplyTiming {
  /** Which kind of reply this is. */
  kind: 'toolCalls';
  /** The calls, in order. */
  toolCalls: ScriptedToolCall[];
  /** The usage it reports. Default: estimated. */
  usage?: ScriptedUsage;
  /** Assistant text sent alongside the calls (`message.content`); `null` content when omitted. */
  text?: string;
}

/**
 * The model answers with `message.content` set to this array verbatim, as some OpenAI-compatible providers
 * do (e.g. `{ type: 'tool_call', id, name, arguments }` blocks instead of `tool_calls`).
 */
export interface ContentBlocksReply extends ScriptedReplyTiming {
  /** Which kind of reply this is. */
  kind: 'contentBlocks';
  /** The content blocks, sent as they are. */
  blocks: unknown[];
  /**
   * When streaming, send the blocks this many to a delta, after `text`, instead of all of them in the
   * opening delta: providers that stream content blocks do either.
   */
  blocksPerDelta?: number;
  /**
   * Plain text streamed as string deltas before the blocks (without streaming, a leading text
   * block), as providers that mix both do.
   */
  text?: string;
  /**
   * finish_reason to report. Defaults to `tool_calls` when any block has `type: 'tool_call'` (what such a
   * provider reports when it wants tools run), otherwise `stop`.
   */
  finishReason?: FinishReason;
}

/** The server answers with an HTTP error and an OpenAI-style body `{ error: { message, type, code } }`. */
export interface ErrorReply extends ScriptedReplyTiming {
  /** Which kind of reply this is. */
  kind: 'error';
  /** HTTP status, e.g. 400, 401, 429, 500. */
  status: number;
  /** `error.message`; a generic one naming the status when omitted. */
  message?: string;
  /** Extra response headers, e.g. `{ 'retry-after': '1' }`. */
  headers?: Record<string, string>;
}

/**
 * The server holds the request for `ms` and then answers 500; by then a client with a shorter timeout
 * has given up, which is what timeout tests need.
 */
export interface HangReply extends ScriptedReplyTiming {
  /** Which kind of reply this is. */
  kind: 'hang';
  /** How long the request is held before the 500, in milliseconds. */
  ms: number;
}

/** The server destroys the socket without answering, which clients see as a network error. */
export interface DropReply extends ScriptedReplyTiming {
  /** Which kind of reply this is. */
  kind: 'drop';
}

/** One scripted answer to one chat completion request. */
export type ScriptedReply =
  | TextReply
  | ToolCallsReply
  | ContentBlocksReply
  | ErrorReply
  | HangReply
  | DropReply;

/** Chat Completions `finish_reason` values the scripted model can report. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

/** A `POST /v1/chat/completions` request as the server received it. */
export interface RecordedRequest {
  /** The JSON body as the client sent it; the server parses it but does not validate it. */
  body: ChatCompletionCreateParams;
  /** Request headers, names lower-cased, repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Arrival time, milliseconds since the epoch. */
  receivedAt: number;
  /** When a streamed reply's text pieces were written, in order (milliseconds since the epoch). */
  textSentAt: number[];
}

/**
 * Computes a reply for a request the queue had nothing for.
 *
 * @param request the request being answered (already recorded).
 * @param index its 0-based position in {@link ScriptedModel.requests}.
 */
export type ReplyHandler = (
  request: RecordedRequest,
  index: number,
) => ScriptedReply | Promise<ScriptedReply>;

/** Options for {@link startScriptedModel}. */
export interface ScriptedModelOptions {
  /** Interface to listen on; `127.0.0.1` by default. */
  host?: string;
  /** Port to listen on; `0` (any free port) by default. */
  port?: number;
  /**
   * Characters per streamed delta (text and tool-call arguments). By default each string is split into
   * about four pieces so that clients really have to reassemble it.
   */
  chunkSize?: number;
  /** Model id listed by `GET /v1/models`; `scripted-model` by default. */
  modelId?: string;
  /** Handler used when the queue is empty; same as calling {@link ScriptedModel.respond}. */
  respond?: ReplyHandler;
  /**
   * Answers 429 (with `Retry-After`) to chat completion requests above this many in any one second,
   * as a provider's rate limit does. Refused requests consume no reply and are not recorded in
   * {@link ScriptedModel.requests}; {@link ScriptedModel.rateLimitedCount} counts them.
   */
  rateLimit?: {
    /** Requests answered in any one second; those above get a 429. */
    requestsPerSecond: number;
    /** The `Retry-After` the 429 carries, in seconds. Default 1. */
    retryAfterSeconds?: number;
  };
}

/** A running scripted model server. */
export interface ScriptedModel {
  /** Base URL to hand to an OpenAI client, e.g. `http://127.0.0.1:41234/v1`. */
  readonly baseURL: string;
  /** Every chat completion request received since start (or the last {@link reset}), in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Number of recorded requests. */
  readonly requestCount: number;
  /** Requests refused with 429 by the `rateLimit` option. */
  readonly rateLimitedCount: number;
  /** Appends replies to the script; each chat completion request consumes the oldest one. */
  enqueue(...replies: ScriptedReply[]): void;
  /** Sets (or with `undefined`, clears) the handler consulted when the queue is empty. */
  respond(handler: ReplyHandler | undefined): void;
  /** The most recent recorded request, if any. */
  lastRequest(): RecordedRequest | undefined;
  /** Clears the queued replies and the recorded requests; the handler stays. */
  reset(): void;
  /** Stops the server, cutting off any request still waiting on a delay or hang. Safe to call twice. */
  close(): Promise<void>;
}

/** Wire shape of one tool call in a chat completion message. */
interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Everything about an answer that streaming and non-streaming encodings share. */
interface Completion {
  id: string;
  created: number;
  model: string;
  content: string | unknown[] | null;
  /** How content blocks stream, when they do not travel whole in the opening delta. */
  streamedBlocks?: { text: string; blocks: unknown[]; perDelta: number };
  toolCalls: WireToolCall[];
  finishReason: FinishReason;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** Mutable state of one server, shared by the request handler and the returned API. */
interface ServerState {
  queue: ScriptedReply[];
  requests: RecordedRequest[];
  handler: ReplyHandler | undefined;
  completionCount: number;
  toolCallCount: number;
  chunkSize: number | undefined;
  modelId: string;
  /** Aborted on close so that pending delays and hangs do not hold the server open. */
  closing: AbortController;
  rateLimit: ScriptedModelOptions['rateLimit'];
  /** Arrival times of the requests admitted in the last second, oldest first (for `rateLimit`). */
  admitted: number[];
  rateLimitedCount: number;
}

const CHAT_COMPLETIONS_PATH = '/v1/chat/completions';
const MODELS_PATH = '/v1/models';
const DEFAULT_PIECES_PER_STREAM = 4;
/** Rough characters-per-token ratio; usage only needs to be plausible, not exact. */
const CHARS_PER_TOKEN = 4;

/**
 * Starts a scripted model server speaking the OpenAI Chat Completions API.
 *
 * Serves `POST /v1/chat/completions` (streaming and not) from the script and `GET /v1/models` with a
 * single model. A request that neither the queue nor the handler can answer gets HTTP 500 saying the
 * script ran out, so a test that makes an unexpected model call fails loudly.
 */
export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const state: ServerState = {
    queue: [],
    requests: [],
    handler: options.respond,
    completionCount: 0,
    toolCallCount: 0,
    chunkSize: options.chunkSize,
    modelId: options.modelId ?? 'scripted-model',
    closing: new AbortController(),
    rateLimit: options.rateLimit,
    admitted: [],
    rateLimitedCount: 0,
  };
  const server = createServer((request, response) => {
    handleHttpRequest(state, request, response).catch((error: unknown) => {
      sendError(response, 500, `scripted model failed: ${errorMessage(error)}`);
    });
  });
  const host = options.host ?? '127.0.0.1';
  await listen(server, host, options.port ?? 0);
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;

  return {
    baseURL: `http://${host}:${port}/v1`,
    requests: state.requests,
    get requestCount() {
      return state.requests.length;
    },
    get rateLimitedCount() {
      return state.rateLimitedCount;
    },
    enqueue: (...replies) => {
      state.queue.push(...replies);
    },
    respond: (handler) => {
      state.handler = handler;
    },
    lastRequest: () => state.requests.at(-1),
    reset: () => {
      state.queue.length = 0;
      // Cleared in place so that references to `requests` taken earlier stay live.
      state.requests.length = 0;
    },
    close: () => {
      closed ??= closeServer(server, state.closing);
      return closed;
    },
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server, closing: AbortController): Promise<void> {
  closing.abort();
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Keep-alive sockets from clients would otherwise keep close() waiting.
    server.closeAllConnections();
  });
}

async function handleHttpRequest(
  state: ServerState,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  if (request.method === 'GET' && path === MODELS_PATH) {
    sendJson(response, 200, modelList(state.modelId));
    return;
  }
  if (request.method !== 'POST' || path !== CHAT_COMPLETIONS_PATH) {
    sendError(
      response,
      404,
      `scripted model serves POST ${CHAT_COMPLETIONS_PATH} and GET ${MODELS_PATH} only`,
    );
    return;
  }
  const rawBody = await readBody(request);
  if (overRateLimit(state)) {
    state.rateLimitedCount += 1;
    const retryAfter = String(state.rateLimit?.retryAfterSeconds ?? 1);
    sendError(response, 429, 'scripted model: rate limit reached', { 'retry-after': retryAfter });
    return;
  }
  let body: ChatCompletionCreateParams;
  try {
    body = JSON.parse(rawBody) as ChatCompletionCreateParams;
  } catch {
    sendError(response, 400, 'request body is not valid JSON');
    return;
  }
  const recorded: RecordedRequest = {
    body,
    headers: flattenHeaders(request),
    receivedAt: Date.now(),
    textSentAt: [],
  };
  const index = state.requests.push(recorded) - 1;
  // Taken from the queue before any await so that concurrent requests get replies in arrival order.
  const queued = state.queue.shift();
  const reply = queued ?? (state.handler ? await state.handler(recorded, index) : undefined);
  if (!reply) {
    sendError(
      response,
      500,
      `scripted model: script ran out at request #${index + 1} (no reply enqueued and no respond handler)`,
    );
    return;
  }
  await serveReply(state, recorded, reply, response);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function flattenHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Whether a request arriving now is over `rateLimit` (a sliding window of one second); one that is not counts in the window. */
function overRateLimit(state: ServerState): boolean {
  if (!state.rateLimit) return false;
  const now = Date.now();
  while (state.admitted.length > 0 && (state.admitted[0] as number) <= now - 1000) state.admitted.shift();
  if (state.admitted.length >= state.rateLimit.requestsPerSecond) return true;
  state.admitted.push(now);
  return false;
}

async function serveReply(
  state: ServerState,
  request: RecordedRequest,
  reply: ScriptedReply,
  response: ServerResponse,
): Promise<void> {
  if (!(await pause(reply.delayMs ?? 0, state.closing.signal))) return;
  switch (reply.kind) {
    case 'error':
      sendError(response, reply.status, reply.message ?? `scripted ${reply.status} error`, reply.headers);
      return;
    case 'hang':
      if (await pause(reply.ms, state.closing.signal)) {
        sendError(response, 500, `scripted model hung for ${reply.ms}ms`);
      }
      return;
    case 'drop':
      response.socket?.destroy();
      return;
    default: {
      const completion = buildCompletion(state, request.body, reply);
      if (request.body.stream) {
        await sendStream(response, completion, state, reply, includesStreamUsage(request.body), request);
      } else {
        sendJson(response, 200, completionBody(completion));
      }
    }
  }
}

/** Waits `ms`; resolves false instead of throwing when the server closes meanwhile. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0) return !signal.aborted;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

function includesStreamUsage(body: ChatCompletionCreateParams): boolean {
  return body.stream_options?.include_usage === true;
}

function buildCompletion(
  state: ServerState,
  body: ChatCompletionCreateParams,
  reply: TextReply | ToolCallsReply | ContentBlocksReply,
): Completion {
  state.completionCount += 1;
  const toolCalls =
    reply.kind === 'toolCalls' ? reply.toolCalls.map((call) => toWireToolCall(state, call)) : [];
  const content = replyContent(reply);
  const scripted = reply.kind === 'contentBlocks' ? undefined : reply.usage;
  const promptTokens =
    scripted?.promptTokens ?? estimateTokens(JSON.stringify([body.messages, body.tools ?? []]));
  const completionTokens = scripted?.completionTokens ?? estimateTokens(JSON.stringify([content, toolCalls]));
  const streamedBlocks =
    reply.kind === 'contentBlocks' && (reply.blocksPerDelta || reply.text)
      ? {
          text: reply.text ?? '',
          blocks: reply.blocks,
          perDelta: reply.blocksPerDelta ?? reply.blocks.length,
        }
      : undefined;
  return {
    id: `chatcmpl-${state.completionCount}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    content,
    ...(streamedBlocks ? { streamedBlocks } : {}),
    toolCalls,
    finishReason: replyFinishReason(reply),
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

function replyContent(reply: TextReply | ToolCallsReply | ContentBlocksReply): string | unknown[] | null {
  switch (reply.kind) {
    case 'text':
      return reply.text;
    case 'toolCalls':
      return reply.text ?? null;
    case 'contentBlocks':
      return reply.text ? [{ type: 'text', text: reply.text }, ...reply.blocks] : reply.blocks;
  }
}

function replyFinishReason(reply: TextReply | ToolCallsReply | ContentBlocksReply): FinishReason {
  switch (reply.kind) {
    case 'text':
      return 'stop';
    case 'toolCalls':
      return 'tool_calls';
    case 'contentBlocks':
      return reply.finishReason ?? (reply.blocks.some(isToolCallBlock) ? 'tool_calls' : 'stop');
  }
}

function isToolCallBlock(block: unknown): boolean {
  return typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'tool_call';
}

function toWireToolCall(state: ServerState, call: ScriptedToolCall): WireToolCall {
  state.toolCallCount += 1;
  return {
    id: call.id ?? `call_${state.toolCallCount}`,
    type: 'function',
    function: {
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    },
  };
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / CHARS_PER_TOKEN));
}

function completionBody(completion: Completion): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: completion.content, refusal: null };
  if (completion.toolCalls.length > 0) message.tool_calls = completion.toolCalls;
  return {
    id: completion.id,
    object: 'chat.completion',
    created: completion.created,
    model: completion.model,
    system_fingerprint: null,
    choices: [{ index: 0, message, logprobs: null, finish_reason: completion.finishReason }],
    usage: completion.usage,
  };
}

/** Deltas in the order OpenAI sends them: role first, then content, then each tool call, then nothing. */
function streamDeltas(completion: Completion, chunkSize: number | undefined): Record<string, unknown>[] {
  const deltas: Record<string, unknown>[] = [];
  const { content, streamedBlocks } = completion;
  if (streamedBlocks) {
    deltas.push({ role: 'assistant', content: '', refusal: null });
    for (const piece of splitIntoPieces(streamedBlocks.text, chunkSize)) deltas.push({ content: piece });
    const perDelta = Math.max(1, streamedBlocks.perDelta);
    for (let start = 0; start < streamedBlocks.blocks.length; start += perDelta) {
      deltas.push({ content: streamedBlocks.blocks.slice(start, start + perDelta) });
    }
    return deltas;
  }
  // By default content blocks travel whole in the opening delta.
  deltas.push({ role: 'assistant', content: typeof content === 'string' ? '' : content, refusal: null });
  if (typeof content === 'string') {
    for (const piece of splitIntoPieces(content, chunkSize)) deltas.push({ content: piece });
  }
  completion.toolCalls.forEach((call, index) => {
    deltas.push({
      tool_calls: [
        { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
      ],
    });
    for (const piece of splitIntoPieces(call.function.arguments, chunkSize)) {
      deltas.push({ tool_calls: [{ index, function: { arguments: piece } }] });
    }
  });
  return deltas;
}

async function sendStream(
  response: ServerResponse,
  completion: Completion,
  state: ServerState,
  timing: ScriptedReplyTiming,
  includeUsage: boolean,
  request: RecordedRequest,
): Promise<void> {
  if (response.destroyed) return;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
  });
  const chunk = (choices: unknown[], usage?: Completion['usage']): Record<string, unknown> => ({
    id: completion.id,
    object: 'chat.completion.chunk',
    created: completion.created,
    model: completion.model,
    system_fingerprint: null,
    choices,
    // OpenAI sends `usage: null` on every chunk but the last once usage was requested.
    ...(includeUsage ? { usage: usage ?? null } : {}),
  });
  const choice = (delta: Record<string, unknown>, finishReason: FinishReason | null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finishReason,
  });
  let sent = 0;
  const share = new WriterShare();
  for (const delta of streamDeltas(completion, state.chunkSize)) {
    if (sent === timing.dropAfterDeltas) {
      response.socket?.destroy();
      return;
    }
    if (timing.deltaDelayMs && !(await pause(timing.deltaDelayMs, state.closing.signal))) return;
    else if (!(await share.now(response, state.closing.signal))) return;
    if (response.destroyed) return;
    share.wrote(writeEvent(response, chunk([choice(delta, null)])));
    if (typeof delta.content === 'string' && delta.content !== '') request.textSentAt.push(Date.now());
    sent += 1;
  }
  if (timing.finishDelayMs && !(await pause(timing.finishDelayMs, state.closing.signal))) return;
  if (response.destroyed) return;
  writeEvent(response, chunk([choice({}, completion.finishReason)]));
  if (includeUsage) writeEvent(response, chunk([], completion.usage));
  response.end('data: [DONE]\n\n');
}

/** Writes one event; false when the response's buffer is full (wait for `drain`). */
function writeEvent(response: ServerResponse, data: unknown): boolean {
  return response.write(`data: ${JSON.stringify(data)}\n\n`);
}

/** The longest a stream writes without letting the server's other requests run. */
const SHARE_SERVER_EVERY_MS = 10;

/**
 * Lets a stream of many deltas share the server, as a provider serves requests side by side: it
 * waits while the reader has not taken what was written, and yields now and then. Writing half a
 * million deltas in one loop held the server for seconds, and every other conversation's model call
 * with it, which tests and the benchmark then measured as the worker's stall.
 */
class WriterShare {
  #since = performance.now();
  #full = false;

  wrote(accepted: boolean): void {
    this.#full = !accepted;
  }

  /** Waits for the reader or the event loop when due; false when the response or the server closed. */
  async now(response: ServerResponse, signal: AbortSignal): Promise<boolean> {
    if (this.#full) {
      this.#full = false;
      if (!(await drained(response, signal))) return false;
    } else if (performance.now() - this.#since >= SHARE_SERVER_EVERY_MS) await setImmediate();
    else return true;
    this.#since = performance.now();
    return !response.destroyed && !signal.aborted;
  }
}

/** Resolves true once `response` drains, false if it or the server closes first. */
function drained(response: ServerResponse, signal: AbortSignal): Promise<boolean> {
  if (response.destroyed || signal.aborted) return Promise.resolve(false);
  if (!response.writableNeedDrain) return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (value: boolean) => () => {
      response.off('drain', onDrain);
      response.off('close', onClose);
      signal.removeEventListener('abort', onClose);
      resolve(value);
    };
    const onDrain = settle(true);
    const onClose = settle(false);
    response.once('drain', onDrain);
    response.once('close', onClose);
    signal.addEventListener('abort', onClose, { once: true });
  });
}

/** Splits by code point so that no piece ends in half a surrogate pair. */
function splitIntoPieces(text: string, chunkSize: number | undefined): string[] {
  const codePoints = Array.from(text);
  const size = Math.max(1, chunkSize ?? Math.ceil(codePoints.length / DEFAULT_PIECES_PER_STREAM));
  const pieces: string[] = [];
  for (let start = 0; start < codePoints.length; start += size) {
    pieces.push(codePoints.slice(start, start + size).join(''));
  }
  return pieces;
}

function modelList(modelId: string): Record<string, unknown> {
  return {
    object: 'list',
    data: [{ id: modelId, object: 'model', created: 0, owned_by: 'yiem-agent-testing' }],
  };
}

function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function errorCode(status: number): string | null {
  if (status === 401) return 'invalid_api_key';
  if (status === 429) return 'rate_limit_exceeded';
  return null;
}

function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(
    response,
    status,
    { error: { message, type: errorType(status), param: null, code: errorCode(status) } },
    headers,
  );
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  // The client may already be gone (timed out, aborted); writing then would only raise.
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, { ...headers, 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
