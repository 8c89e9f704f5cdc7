import type { Client } from '@temporalio/client';
import { msToNumber } from '@temporalio/common';
import { TOOL_NAME_PATTERN, type ToolRegistry } from '../../../activities/registry/registry.ts';
import { MCP_NAME_SEPARATOR } from '../../contract/mcpToolName.ts';
import { describeThrown } from '../../contract/thrown.ts';
import { resolveToolPolicy } from '../../contract/toolPolicy.ts';
import { ToolError } from '../../contract/toolResult.ts';
import type { McpServerConfig } from '../../contract/types/mcp.ts';
import type { AgentTool } from '../../contract/types/tools.ts';
import { currentToolCall } from '../../infrastructure/toolCallContext.ts';
import { checkMcpServers } from './config.ts';
import { McpConnection } from './connection.ts';
import { mcpToolResult } from './result.ts';
import { findSessionQueue } from './sessionPin.ts';
import { McpSessions } from './sessions.ts';
import { type McpToolRunner, mcpAgentTool } from './tools.ts';

/** Sessions of stateful servers idle this long are closed. */
const DEFAULT_SESSION_IDLE_MS = 15 * 60_000;
/** A call pinned to a session whose worker is gone fails after this long instead of waiting forever. */
const DEFAULT_SESSION_SCHEDULE_TO_START = '30 seconds';

export interface McpToolSourceOptions {
  registry: ToolRegistry;
  /**
   * The task queue this worker's own sessions of stateful servers are reached on (known once the
   * worker is configured).
   */
  sessionQueue: () => string | undefined;
  /** A client on the worker's cluster: PREPARE finds a conversation's session through it. */
  getClient?: () => Promise<Client>;
  /** Sessions of stateful servers idle this long are closed. Default 15 minutes. */
  sessionIdleMs?: number;
  log?: (message: string) => void;
}

/** One configured server: the connection that lists its tools, and its sessions when it is stateful. */
interface ServerEntry {
  name: string;
  config: McpServerConfig;
  /** Lists the tools; for a shared server it also runs every call of this worker. */
  catalog: McpConnection;
  sessions?: McpSessions;
  /** Names under which its tools are registered now. */
  registered: string[];
  lastRefreshError?: string;
}

/**
 * The tools of a worker's MCP servers, kept in its registry as `<server>__<tool>`. The registry
 * refreshes it before every model call, PREPARE and tool call; a server's list is read again only
 * after the server announced a change (`notifications/tools/list_changed`) or restarted.
 */
export class McpToolSource {
  readonly #registry: ToolRegistry;
  readonly #servers: ServerEntry[];
  readonly #options: McpToolSourceOptions;
  #started: Promise<void> | undefined;

  constructor(servers: Record<string, McpServerConfig>, options: McpToolSourceOptions) {
    checkMcpServers(servers);
    this.#registry = options.registry;
    this.#options = options;
    const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.#servers = Object.entries(servers).map(([name, config]) => {
      const catalog = new McpConnection(name, config);
      const stateful = config.session === 'conversation';
      return {
        name,
        config: stateful
          ? {
              ...config,
              policy: { scheduleToStartTimeout: DEFAULT_SESSION_SCHEDULE_TO_START, ...config.policy },
            }
          : config,
        catalog,
        registered: [],
        ...(stateful
          ? {
              sessions: new McpSessions(name, config, {
                idleMs,
                onToolsChanged: () => catalog.markToolsStale(),
              }),
            }
          : {}),
      };
    });
    this.#registry.addSource(this);
  }

  /** Whether any server keeps a session per conversation (the worker then polls its session queue). */
  get hasStatefulServers(): boolean {
    return this.#servers.some((server) => server.sessions);
  }

  /**
   * Connects every server and registers its tools; throws when a server does not start or one of its
   * tools has a name that is taken. Later calls return the first one's outcome.
   */
  start(): Promise<void> {
    this.#started ??= (async () => {
      for (const server of this.#servers) await this.#sync(server);
    })();
    return this.#started;
  }

  /**
   * Reads again the tool lists that changed (and those never read: a source nobody started starts
   * here). A server that cannot be reached keeps its last tools (a
   * call then restarts it or fails with a clear error); the failure is logged once.
   */
  async refresh(): Promise<void> {
    for (const server of this.#servers) {
      if (!server.catalog.toolsStale) continue;
      try {
        await this.#sync(server);
        server.lastRefreshError = undefined;
      } catch (error) {
        const message = describeThrown(error);
        if (server.lastRefreshError !== message) this.#log(`MCP server "${server.name}": ${message}`);
        server.lastRefreshError = message;
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      this.#servers.flatMap((server) => [server.catalog.close(), server.sessions?.closeAll()]),
    );
  }

  /** Replaces the server's tools in the registry with its current list. */
  async #sync(server: ServerEntry): Promise<void> {
    const listed = await server.catalog.listTools();
    const offered = server.config.tools
      ? listed.filter((tool) => server.config.tools?.includes(tool.name))
      : listed;
    for (const name of server.registered) this.#registry.unregisterTool(name);
    server.registered = [];
    const run = this.#runner(server);
    const taskQueueFor = server.sessions ? this.#sessionRouter(server) : undefined;
    for (const tool of offered) {
      const agentTool: AgentTool = mcpAgentTool(server.name, server.config, tool, run, taskQueueFor);
      if (!TOOL_NAME_PATTERN.test(agentTool.name)) {
        this.#log(
          `MCP server "${server.name}": tool "${tool.name}" is left out: ${agentTool.name} is longer than 64 characters`,
        );
        continue;
      }
      this.#registry.registerTool(agentTool, `MCP server "${server.name}"`);
      server.registered.push(agentTool.name);
    }
  }

  #runner(server: ServerEntry): McpToolRunner {
    const timeoutMs = msToNumber(resolveToolPolicy(server.config.policy).startToCloseTimeout);
    return async (tool, args, signal, onPartialResult) => {
      const sessionQueue = server.sessions ? this.#options.sessionQueue() : undefined;
      const call = (connection: McpConnection) =>
        connection.callTool(tool, args, {
          signal,
          timeoutMs,
          onProgress: ({ progress, total, message }) =>
            onPartialResult({
              progress,
              ...(total !== undefined ? { total } : {}),
              ...(message ? { message } : {}),
            }),
        });
      const origin = { server: server.name, tool, ...(sessionQueue ? { sessionQueue } : {}) };
      if (!server.sessions) return mcpToolResult(await call(server.catalog), origin);
      return server.sessions.with(currentToolCall().conversationId, async (session) => {
        try {
          return mcpToolResult(await call(session), origin);
        } catch (error) {
          // A refused call leaves the session as it was: its error result keeps the conversation pinned to it.
          if (error instanceof ToolError && !error.details && session.connected) {
            throw new ToolError(error.message, { details: { mcp: origin } });
          }
          throw error;
        }
      });
    };
  }

  /** PREPARE sends a conversation's calls to the worker holding its session, or to this one. */
  #sessionRouter(server: ServerEntry): NonNullable<AgentTool['taskQueueFor']> {
    const { getClient, sessionQueue } = this.#options;
    return async ({ conversationId }) => {
      const own = sessionQueue();
      if (!getClient || !own) return undefined;
      const pinned = await findSessionQueue(
        await getClient(),
        conversationId,
        `${server.name}${MCP_NAME_SEPARATOR}`,
      );
      return pinned ?? own;
    };
  }

  #log(message: string): void {
    (this.#options.log ?? console.warn)(message);
  }
}
