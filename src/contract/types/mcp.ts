/**
 * MCP servers (layer 1): one server whose tools a worker offers to the model.
 */

import type { ActivityPolicy } from './base.ts';

/**
 * One MCP server whose tools a worker offers to the model beside its own, as `<server>__<tool>`
 * (see `AgentWorkerOptions.tools.mcpServers` and `yiem worker --mcp FILE`). Give `command` for a server the
 * worker starts as a child process (stdio), or `url` for a streamable-HTTP server.
 */
export interface McpServerConfig {
  /** The program of a stdio server, e.g. `npx`. */
  command?: string;
  /** Its arguments, e.g. `["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]`. */
  args?: string[];
  /** Extra environment of a stdio server (on top of PATH, HOME and the like). */
  env?: Record<string, string>;
  /** Working directory of a stdio server. Default: the worker's. */
  cwd?: string;
  /** The endpoint of a streamable-HTTP server, e.g. `http://127.0.0.1:3001/mcp`. */
  url?: string;
  /** HTTP headers sent with every request to `url`, e.g. `Authorization`. */
  headers?: Record<string, string>;
  /**
   * `'shared'` (default): a stateless server; each worker keeps one connection and any worker runs any
   * call. `'conversation'`: a stateful server; each conversation gets its own session, held by one
   * worker, and its calls run on that worker (see docs/mcp.md).
   */
  session?: 'shared' | 'conversation';
  /** Timeouts and retries of this server's tool calls, as for any tool. */
  policy?: ActivityPolicy;
  /** `true`: every call waits for approval; a list: calls of these tools (MCP names) do. */
  requiresApproval?: boolean | string[];
  /**
   * `true`: every tool of this server is at most once (`ActivityTool.atMostOnce`): an interrupted
   * call is reported as of unknown outcome, never sent to the server again; a list: these tools
   * (MCP names) are. Default: none.
   */
  atMostOnce?: boolean | string[];
  /** Whether its tools may run concurrently with others in parallel mode. Default true. */
  parallel?: boolean;
  /** Offer only these tools (MCP names). Default: all the server lists. */
  tools?: string[];
}
