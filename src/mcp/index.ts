export { loadMcpConfig } from './config.ts';
export { McpToolSource, type McpToolSourceOptions } from './source.ts';
export { MCP_NAME_SEPARATOR, mcpToolName } from './tools.ts';
