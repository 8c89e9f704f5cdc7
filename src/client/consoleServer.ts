import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  CONSOLE_LISTED_CONVERSATIONS,
  CONSOLE_TRANSCRIPT_MESSAGES,
  MAX_CONSOLE_REQUEST_BYTES,
} from '../contract/limits.ts';
import { CONVERSATION_STATUSES, type ConversationSearchStatus } from '../contract/searchAttributes.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { TurnStarts } from '../contract/transcript.ts';
import type { ApprovalOutcome, ApprovalWait } from '../contract/types/approvals.ts';
import type { MessageDelivery } from '../contract/types/messages.ts';
import { namesLoopbackHost, requireTokenOffLoopback, TokenCheck } from '../infrastructure/httpAccess.ts';
import { listen } from '../infrastructure/httpListen.ts';
import { type ChatEndpointOptions, createChatEndpoint } from './chatEndpoint.ts';
import type { AgentClient, Conversation, ConversationListing } from './client.ts';
import type { ConsoleConversation, ConsoleInfo, ConsoleListing, ConsoleMessages } from './consoleApi.ts';
import { finishedLength, transcriptUiMessages } from './consoleTranscript.ts';
import { readServerRecord, transcriptFromHistory } from './serverRecord.ts';
import { readTurnBoundaries } from './turnBoundaries.ts';

/** Options of {@link serveConsole}. */
export interface ServeConsoleOptions {
  /** The client the console reaches conversations with (and decides approvals as). */
  client: AgentClient;
  /** The address to listen on. Default `127.0.0.1`; any but loopback needs `token`. */
  host?: string;
  /** Default 0: a free port (see `url`). */
  port?: number;
  /**
   * When set, every API request must carry `Authorization: Bearer <token>` or `?token=<token>`
   * (the page keeps a `?token=` it was opened with). Required on any address but loopback.
   */
  token?: string;
  /**
   * The Temporal Web UI (e.g. `http://127.0.0.1:8233`): the console links each conversation and
   * each tool call to its place there. Without it, no links.
   */
  webUiUrl?: string;
  /** The settings of a conversation started from the console. Without it, the console starts none. */
  newConversation?: ChatEndpointOptions['newConversation'];
  /** How decisions made in the console name who decided. Default: the client's identity. */
  decider?: string;
  /** The built page (`dist/console`). Default: the package's own. */
  assetsDir?: string;
}

/** The console listening on its own Node server. */
export interface RunningConsole {
  /** The page's URL, e.g. `http://127.0.0.1:51234/`. */
  url: string;
  /** The Node HTTP server it listens with, e.g. to read its address. */
  server: Server;
  /** Stops serving the page and its API. */
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

const SECURITY_HEADERS: Record<string, string> = {
  // The page loads only its own files (no CDN) and talks only to this server.
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
  // A `?token=` in the page's address must not travel to the Web UI with a click on a link.
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/** Where the chat endpoint is mounted on the console's server; the page's `useChat` uses it. */
const CHAT_PATH = '/api/chat';
const API_PATH = '/api/console';

/**
 * Serves the console: the page (`dist/console`), the chat endpoint it chats through, and a small
 * JSON API for the list, a conversation's state and transcript, cancel and approvals. It listens on
 * loopback unless told otherwise; on any other address it needs a `token`. Without a token, requests
 * must name a loopback host in `Host` (as `serveChatEndpoint`'s do).
 */
export async function serveConsole(options: ServeConsoleOptions): Promise<RunningConsole> {
  const { host = '127.0.0.1', port = 0 } = options;
  requireTokenOffLoopback('console', host, options.token);
  const assetsDir = options.assetsDir ?? packagedAssets();
  if (!existsSync(path.join(assetsDir, 'index.html'))) {
    throw new Error(`The console's page is not built: ${assetsDir} has no index.html (npm run build)`);
  }
  const api = new ConsoleApi(options);
  const tokenCheck = options.token ? new TokenCheck(options.token) : undefined;
  const chat = createChatEndpoint({
    client: options.client,
    ...(options.newConversation ? { newConversation: options.newConversation } : {}),
    ...(options.decider ? { decider: options.decider } : {}),
  });
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (!tokenCheck && !namesLoopbackHost(request.headers.host)) {
      return sendText(response, 403, 'The console answers requests to localhost only');
    }
    const isApi = url.pathname === CHAT_PATH || url.pathname.startsWith('/api/');
    if (!isApi) {
      void serveAsset(assetsDir, url.pathname, response);
      return;
    }
    const given = url.searchParams.get('token') ?? undefined;
    if (
      tokenCheck &&
      !tokenCheck.matchesBearer(request.headers.authorization) &&
      !tokenCheck.matches(given)
    ) {
      response.setHeader('www-authenticate', 'Bearer');
      return sendText(response, 401, 'The console needs `Authorization: Bearer <token>` or `?token=<token>`');
    }
    if (url.pathname === CHAT_PATH || url.pathname.startsWith(`${CHAT_PATH}/`)) {
      chat.node(request, response);
      return;
    }
    void api.handle(request, url, response);
  });
  const { origin, close } = await listen(server, port, host);
  return { url: `${origin}/`, server, close };
}

/**
 * The built page: `dist/console` of the package, seen from this module in `dist/src/client/` once
 * built, or from `src/client/` when run from the sources.
 */
function packagedAssets(): string {
  const built = fileURLToPath(new URL('../../console/', import.meta.url));
  return existsSync(path.join(built, 'index.html'))
    ? built
    : fileURLToPath(new URL('../../dist/console/', import.meta.url));
}

async function serveAsset(dir: string, pathname: string, response: ServerResponse): Promise<void> {
  try {
    // Normalized from the root, `..` cannot climb out of the folder.
    const relative =
      pathname === '/' ? 'index.html' : path.posix.normalize(decodeURIComponent(pathname)).slice(1);
    const file = path.join(dir, relative);
    const content = await readFile(file);
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
      // Assets have hashed names; the page itself is read again on each load.
      'cache-control': relative === 'index.html' ? 'no-cache' : 'public, max-age=31536000, immutable',
    });
    response.end(content);
  } catch {
    sendText(response, 404, 'Not found');
  }
}

/** A refusal with its HTTP status; its message is the response body. */
class ConsoleRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const CONVERSATION_ROUTE = /^\/conversations\/([^/]+)(?:\/(messages|cancel|approvals\/([^/]+)))?\/?$/;

type WebUiPlaces = Pick<ConsoleConversation, 'calls' | 'subAgents'>;

/** Runs whose Web UI places the console keeps, the most recently read ones. */
const REMEMBERED_RUNS = 200;

class ConsoleApi {
  readonly #options: ServeConsoleOptions;
  /** By run id: the places read from its history, and how long the history was then. */
  readonly #places = new Map<string, { historyLength: number; places: WebUiPlaces }>();

  constructor(options: ServeConsoleOptions) {
    this.#options = options;
  }

  get #namespace(): string {
    return this.#options.client.client.options.namespace;
  }

  async handle(request: IncomingMessage, url: URL, response: ServerResponse): Promise<void> {
    try {
      const body = await this.#route(request, url);
      response.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
      });
      response.end(JSON.stringify(body));
    } catch (error) {
      if (error instanceof ConsoleRequestError) return sendText(response, error.status, error.message);
      sendText(response, 500, describeThrown(error));
    }
  }

  async #route(request: IncomingMessage, url: URL): Promise<unknown> {
    if (!url.pathname.startsWith(`${API_PATH}/`)) throw new ConsoleRequestError(404, 'Not found');
    const route = url.pathname.slice(API_PATH.length);
    const method = request.method ?? 'GET';
    if (route === '/info' && method === 'GET') return this.#info();
    if (route === '/conversations' && method === 'GET') return this.#list(url.searchParams.get('status'));
    const match = CONVERSATION_ROUTE.exec(route);
    if (!match) throw new ConsoleRequestError(404, `Not found: ${url.pathname}`);
    const conversation = this.#options.client.getConversation(decodeURIComponent(match[1] as string));
    const action = match[2];
    if (method === 'GET' && action === undefined) return this.#conversation(conversation);
    if (method === 'GET' && action === 'messages') return this.#messages(conversation);
    if (method === 'POST' && action === 'cancel') {
      await readJson(request);
      return { running: await conversation.cancel() };
    }
    if (method === 'POST' && action === 'messages') return this.#post(conversation, await readJson(request));
    if (method === 'POST' && match[3] !== undefined) {
      return this.#decide(conversation, decodeURIComponent(match[3]), await readJson(request));
    }
    throw new ConsoleRequestError(405, `${method} ${url.pathname} is not served`);
  }

  #info(): ConsoleInfo {
    return {
      namespace: this.#namespace,
      webUiUrl: this.#options.webUiUrl?.replace(/\/+$/, '') ?? null,
      canStart: this.#options.newConversation !== undefined,
    };
  }

  async #list(status: string | null): Promise<ConsoleListing[]> {
    if (status !== null && !(CONVERSATION_STATUSES as readonly string[]).includes(status)) {
      throw new ConsoleRequestError(400, `status is one of ${CONVERSATION_STATUSES.join(', ')}`);
    }
    const rows = await this.#options.client.listConversations({
      ...(status ? { status: status as ConversationSearchStatus } : {}),
      limit: CONSOLE_LISTED_CONVERSATIONS,
    });
    // One visibility call and no Query: a conversation whose worker is gone must not hold up the list.
    return rows.map((row) => ({
      id: row.id,
      status: row.status ?? null,
      turns: row.turns ?? null,
      agent: row.agent ?? null,
      cost: row.cost ?? null,
      startTime: row.startTime.toISOString(),
      executionStatus: row.executionStatus,
      awaitingApproval: row.status === WAITING ? approvalWaitOf(row.id, rows) : null,
    }));
  }

  async #conversation(conversation: Conversation): Promise<ConsoleConversation> {
    const description = await described(conversation);
    const read = await conversation.statusOrRecord().catch(() => null);
    const places = await this.#webUiPlaces(conversation, description.runId, description.historyLength);
    return {
      id: conversation.id,
      executionStatus: description.status.name,
      status: read && 'status' in read ? read.status : null,
      noWorker: read && 'record' in read ? read.record.noWorker : null,
      keptApprovals: read && 'record' in read ? read.record.pendingApprovals : null,
      webUi: this.#webUiPage(conversation.id),
      ...places,
    };
  }

  #webUiPage(conversationId: string, runId?: string): string | null {
    const base = this.#info().webUiUrl;
    if (!base) return null;
    const page = `${base}/namespaces/${encodeURIComponent(this.#namespace)}/workflows/${encodeURIComponent(conversationId)}`;
    return runId ? `${page}/${encodeURIComponent(runId)}` : page;
  }

  /**
   * The run's tool activities and sub-agent children, read from its history: ids and event ids
   * only, never a payload. Calls of earlier runs (before a continue-as-new) link to no event.
   */
  async #webUiPlaces(conversation: Conversation, runId: string, historyLength: number): Promise<WebUiPlaces> {
    // The page asks every few seconds: a run's history is read again only once it has grown.
    const known = this.#places.get(runId);
    if (known?.historyLength === historyLength) return known.places;
    const places = await this.#readWebUiPlaces(conversation, runId);
    this.#places.delete(runId);
    this.#places.set(runId, { historyLength, places });
    for (const old of this.#places.keys()) {
      if (this.#places.size <= REMEMBERED_RUNS) break;
      this.#places.delete(old);
    }
    return places;
  }

  async #readWebUiPlaces(conversation: Conversation, runId: string): Promise<WebUiPlaces> {
    const calls: Record<string, string> = {};
    const subAgents: Record<string, string | null> = {};
    const runPage = this.#webUiPage(conversation.id, runId);
    const history = await conversation.handle.client.getHandle(conversation.id, runId).fetchHistory();
    for (const event of history.events ?? []) {
      const eventPage = runPage ? `${runPage}/history/events/${String(event.eventId)}` : undefined;
      const activityId = event.activityTaskScheduledEventAttributes?.activityId;
      if (activityId && eventPage) calls[activityId] = eventPage;
      const child = event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
      if (child) subAgents[child] = this.#webUiPage(child);
    }
    return { calls, subAgents };
  }

  async #messages(conversation: Conversation): Promise<ConsoleMessages> {
    await described(conversation);
    const status = await conversation.statusWithin();
    if (!status) return this.#messagesFromHistory(conversation);
    const starts = await readTurnBoundaries(conversation.handle).then(
      (boundaries) => boundaries.starts,
      () => undefined,
    );
    const firstIndex = Math.max(0, status.messageCount - CONSOLE_TRANSCRIPT_MESSAGES);
    const messages = await conversation.messages({ fromIndex: firstIndex });
    const running = status.state === 'running';
    const runningStart = running ? runningTurnStart(starts, status.turn) : undefined;
    const end = running ? finishedLength(messages, firstIndex, runningStart) : firstIndex + messages.length;
    const shown = messages.slice(0, end - firstIndex);
    // Each user message is a UI message of its own; the running turn's are the last ones.
    let openingMessages = 0;
    if (running) {
      const turnMessages = end - (runningStart ?? firstIndex);
      while (openingMessages < turnMessages && shown.at(-1 - openingMessages)?.role === 'user') {
        openingMessages += 1;
      }
    }
    return {
      messages: transcriptUiMessages(conversation.id, shown, starts, firstIndex),
      truncated: firstIndex > 0,
      openingMessages,
      noWorker: null,
    };
  }

  /** The transcript as the server's history records it, when no worker answers. */
  async #messagesFromHistory(conversation: Conversation): Promise<ConsoleMessages> {
    const [messages, record] = await Promise.all([
      transcriptFromHistory(conversation.handle),
      readServerRecord(conversation.handle),
    ]);
    const firstIndex = Math.max(0, messages.length - CONSOLE_TRANSCRIPT_MESSAGES);
    return {
      messages: transcriptUiMessages(conversation.id, messages.slice(firstIndex), undefined, firstIndex),
      truncated: firstIndex > 0,
      openingMessages: 0,
      noWorker: record.noWorker,
    };
  }

  /**
   * A message posted while a turn runs, with how it joins it (`steer`, `followUp`, `interrupt`): the
   * page follows the running turn over the chat endpoint, and a second chat request would follow it twice.
   */
  async #post(conversation: Conversation, body: unknown): Promise<{ posted: true }> {
    const { text, delivery } = (typeof body === 'object' && body !== null ? body : {}) as Record<
      string,
      unknown
    >;
    if (typeof text !== 'string') throw new ConsoleRequestError(400, 'A message is `{ text, delivery? }`');
    // `post` refuses an empty or too large text and an unknown delivery, each with its reason.
    try {
      await conversation.post(text, delivery === undefined ? {} : { delivery: delivery as MessageDelivery });
    } catch (error) {
      throw new ConsoleRequestError(400, describeThrown(error));
    }
    return { posted: true };
  }

  async #decide(conversation: Conversation, approvalId: string, body: unknown): Promise<ApprovalOutcome> {
    const { approve, reason } = (body ?? {}) as { approve?: unknown; reason?: unknown };
    if (typeof approve !== 'boolean')
      throw new ConsoleRequestError(400, 'A decision is `{ "approve": true|false, "reason"?: string }`');
    const decider = this.#options.decider ? { decider: this.#options.decider } : {};
    try {
      return approve
        ? await conversation.approve(approvalId, decider)
        : await conversation.deny(
            approvalId,
            typeof reason === 'string' && reason ? reason : undefined,
            decider,
          );
    } catch (error) {
      throw new ConsoleRequestError(409, describeThrown(error));
    }
  }
}

const WAITING: ConversationSearchStatus = 'awaitingApproval';

/**
 * Whose approval a listed conversation waits for, from the listing alone: its sub-agents (ids
 * `<parent>.<agent>.turn-<n>.<call>`) that wait too, else its own calls. One that waits for both
 * shows its sub-agents; the conversation's page shows every wait.
 */
function approvalWaitOf(id: string, rows: ConversationListing[]): ApprovalWait {
  const waiting = rows.filter((row) => row.status === WAITING && row.id.startsWith(`${id}.`));
  const children = waiting
    .filter((row) => !waiting.some((other) => other !== row && row.id.startsWith(`${other.id}.`)))
    .map((row) => row.id);
  return { ownCalls: children.length > 0 ? 0 : 1, subAgents: children };
}

function runningTurnStart(starts: TurnStarts | undefined, turn: number): number | undefined {
  return starts?.starts[turn - starts.firstTurn];
}

async function described(conversation: Conversation) {
  try {
    return await conversation.handle.describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError)
      throw new ConsoleRequestError(404, `No conversation has the id "${conversation.id}"`);
    throw error;
  }
}

/**
 * A POST's JSON body. JSON only: a page of another origin can post a form or text/plain without
 * asking, while JSON needs a preflight this server does not answer.
 */
async function readJson(request: IncomingMessage): Promise<unknown> {
  if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) {
    throw new ConsoleRequestError(415, 'Send JSON, with `content-type: application/json`');
  }
  const parts: Buffer[] = [];
  let bytes = 0;
  for await (const part of request) {
    bytes += (part as Buffer).length;
    if (bytes > MAX_CONSOLE_REQUEST_BYTES)
      throw new ConsoleRequestError(413, `The request is larger than ${MAX_CONSOLE_REQUEST_BYTES} bytes`);
    parts.push(part as Buffer);
  }
  const text = Buffer.concat(parts).toString('utf8');
  try {
    return text === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new ConsoleRequestError(400, `The request is not JSON: ${describeThrown(error)}`);
  }
}

function sendText(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  response.end(text);
}
