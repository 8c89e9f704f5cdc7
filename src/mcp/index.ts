export { loadMcpConfig } from './config.ts';
export { MCP_NAME_SEPARATOR, mcpToolName } from './tools.ts';
