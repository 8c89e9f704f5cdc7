/** Between the server's name and the tool's: `filesystem__read_text_file`. */
export const MCP_NAME_SEPARATOR = '__';

/**
 * The name the model calls an MCP tool by. Characters model APIs refuse in function names (MCP
 * allows `.` and `/`) become `_`.
 */
export function mcpToolName(server: string, tool: string): string {
  return `${server}${MCP_NAME_SEPARATOR}${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
