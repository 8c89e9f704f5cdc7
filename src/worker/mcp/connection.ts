import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { MAX_MCP_STDIO_MESSAGE_BYTES } from '../../contract/limits.ts';
import { describeThrown } from '../../contract/thrown.ts';
import { ToolError } from '../../contract/toolResult.ts';
import type { McpServerConfig } from '../../contract/types/mcp.ts';

const CLIENT_INFO = { name: 'yiem-agent', version: '0.1.0' };

/** How one tool call reaches the server. */
export interface McpCallOptions {
  signal?: AbortSignal | undefined;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** The activity's own time limit: the SDK's default of 60 s would cut longer calls short. */
  timeoutMs: number;
}

/**
 * One client connection to one MCP server. A stdio server is started on first use and started
 * again on the first use after it exits; a closed HTTP connection is opened again the same way.
 */
export class McpConnection {
  readonly server: string;
  readonly #config: McpServerConfig;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #tools: Tool[] | undefined;
  #toolsStale = true;

  readonly #onToolsChanged: (() => void) | undefined;

  /** `onToolsChanged`: called when the server announces that its tool list changed. */
  constructor(server: string, config: McpServerConfig, onToolsChanged?: () => void) {
    this.server = server;
    this.#config = config;
    this.#onToolsChanged = onToolsChanged;
  }

  /** Whether the server is running (or the HTTP connection open) now. */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** Makes the next `listTools()` ask the server again. */
  markToolsStale(): void {
    this.#toolsStale = true;
  }

  /** Whether the tool list must be read again: never read, the server said it changed, or it restarted. */
  get toolsStale(): boolean {
    return this.#toolsStale || !this.#tools;
  }

  /** The connected client, starting (or restarting) the server when there is none. */
  connect(): Promise<Client> {
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /** The server's tools, read again only when stale. */
  async listTools(): Promise<Tool[]> {
    if (this.#tools && !this.toolsStale) return this.#tools;
    const client = await this.connect();
    // Cleared before asking, so a change announced while the list is read marks it stale again.
    this.#toolsStale = false;
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    this.#tools = tools;
    return tools;
  }

  /**
   * Calls one tool. A server that stops during the call, or answers with a protocol error (unknown
   * tool, invalid parameters), throws a `ToolError`: the model sees it at once and the call is not
   * repeated against a server that may have done part of it. Failing to reach the server throws a
   * plain error, which is retried per the policy over a new connection.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: McpCallOptions,
  ): Promise<CallToolResult> {
    const client = await this.connect();
    try {
      return (await client.callTool({ name, arguments: args }, undefined, {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onprogress: options.onProgress } : {}),
        timeout: options.timeoutMs,
        resetTimeoutOnProgress: true,
      })) as CallToolResult;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (
        this.#client !== client ||
        (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)
      ) {
        throw new ToolError(
          `MCP server "${this.server}" stopped during the call to "${name}" (${describeThrown(error)}); ` +
            'it is started again on the next call',
        );
      }
      if (error instanceof McpError) {
        throw new ToolError(`MCP server "${this.server}" refused the call to "${name}": ${error.message}`);
      }
      // Unreachable, or an HTTP server that restarted and no longer knows this session: the retry
      // connects anew.
      this.#drop(client);
      throw error;
    }
  }

  async close(): Promise<void> {
    const client = this.#client ?? (await this.#connecting?.catch(() => undefined));
    this.#client = undefined;
    await client?.close();
  }

  #drop(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    void client.close().catch(() => {});
  }

  async #open(): Promise<Client> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      this.#toolsStale = true;
      this.#onToolsChanged?.();
    });
    client.onclose = () => {
      if (this.#client === client) this.#client = undefined;
    };
    try {
      await client.connect(createTransport(this.#config));
    } catch (error) {
      await client.close().catch(() => {});
      throw new Error(
        `MCP server "${this.server}" (${describeServer(this.#config)}) did not start: ${describeThrown(error)}`,
      );
    }
    this.#client = client;
    // A restarted server may offer other tools than the one before it.
    this.#toolsStale = true;
    return client;
  }
}

function createTransport(config: McpServerConfig): Transport {
  if (config.url) {
    return new StreamableHTTPClientTransport(new URL(config.url), {
      ...(config.headers ? { requestInit: { headers: config.headers } } : {}),
    });
  }
  if (!config.command) throw new Error('an MCP server needs a command or a url');
  return new StdioClientTransport({
    command: config.command,
    args: config.args ?? [],
    env: { ...getDefaultEnvironment(), ...config.env },
    ...(config.cwd ? { cwd: config.cwd } : {}),
    stderr: 'inherit',
    maxBufferSize: MAX_MCP_STDIO_MESSAGE_BYTES,
  });
}

/** `npx -y server /data` or the URL, for error messages. */
export function describeServer(config: McpServerConfig): string {
  return config.url ?? [config.command, ...(config.args ?? [])].join(' ');
}
