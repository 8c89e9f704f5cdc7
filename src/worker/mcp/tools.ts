import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { mcpToolName } from '../../contract/mcpToolName.ts';
import type { ToolArguments } from '../../contract/types/base.ts';
import type { McpServerConfig } from '../../contract/types/mcp.ts';
import type { AgentTool, AgentToolResult, OnPartialResult } from '../../contract/types/tools.ts';

/** Runs one call of an MCP tool; the source decides which connection or session it goes to. */
export type McpToolRunner = (
  mcpToolName: string,
  args: ToolArguments,
  signal: AbortSignal | undefined,
  onPartialResult: OnPartialResult,
) => Promise<AgentToolResult>;

/** An MCP tool as an agent tool: the server's schema, the server's policy, the runner as its body. */
export function mcpAgentTool(
  server: string,
  config: McpServerConfig,
  tool: Tool,
  run: McpToolRunner,
  taskQueueFor?: AgentTool['taskQueueFor'],
): AgentTool {
  const { $schema: _dialect, ...inputSchema } = tool.inputSchema as Record<string, unknown>;
  const listed = (setting: boolean | string[] | undefined): boolean =>
    setting === true || (Array.isArray(setting) && setting.includes(tool.name));
  return {
    name: mcpToolName(server, tool.name),
    label: `${server}: ${tool.title ?? tool.annotations?.title ?? tool.name}`,
    description: tool.description || `${tool.name} (MCP server ${server})`,
    // ajv validates by draft-07; the dialect a server names is dropped rather than refused.
    inputSchema,
    parallelToolExecute: config.parallel ?? true,
    ...(config.policy ? { policy: config.policy } : {}),
    requiresApproval: listed(config.requiresApproval),
    // An MCP server cannot be asked whether an interrupted call took effect: its outcome is unknown.
    ...(listed(config.atMostOnce) ? { atMostOnce: true } : {}),
    ...(taskQueueFor ? { taskQueueFor } : {}),
    execute: (_toolCallId, args, signal, onPartialResult) => run(tool.name, args, signal, onPartialResult),
  };
}
