import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { describeThrown } from '../../contract/thrown.ts';
import type { McpServerConfig } from '../../contract/types/mcp.ts';

const SERVER_NAME = /^[A-Za-z][A-Za-z0-9-]*(_[A-Za-z0-9-]+)*$/;
const KNOWN_FIELDS = new Set([
  'command',
  'args',
  'env',
  'cwd',
  'url',
  'headers',
  'session',
  'policy',
  'requiresApproval',
  'atMostOnce',
  'parallel',
  'tools',
]);

/**
 * Reads an MCP config file: `{ "mcpServers": { "<name>": { "command": …, "args": […] } | { "url": … } } }`
 * (the shape MCP clients commonly use). A relative `cwd` is relative to the file.
 */
export async function loadMcpConfig(file: string): Promise<Record<string, McpServerConfig>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`MCP config ${file}: ${describeThrown(error)}`);
  }
  const servers = (parsed as { mcpServers?: unknown } | null)?.mcpServers;
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new Error(`MCP config ${file}: expected { "mcpServers": { "<name>": { … } } }`);
  }
  const entries = Object.entries(servers as Record<string, McpServerConfig>).map(([name, config]) => {
    const cwd = typeof config?.cwd === 'string' ? { cwd: resolve(dirname(file), config.cwd) } : {};
    return [name, { ...config, ...cwd }] as const;
  });
  const result = Object.fromEntries(entries);
  try {
    checkMcpServers(result);
  } catch (error) {
    throw new Error(`MCP config ${file}: ${describeThrown(error)}`);
  }
  return result;
}

/** Throws a clear error for the first server whose name or settings cannot work. */
export function checkMcpServers(servers: Record<string, McpServerConfig>): void {
  for (const [name, config] of Object.entries(servers)) {
    const problem = serverProblem(name, config);
    if (problem) throw new Error(`MCP server "${name}": ${problem}`);
  }
}

function serverProblem(name: string, config: McpServerConfig): string | undefined {
  if (!SERVER_NAME.test(name)) {
    return 'a server name starts with a letter and has letters, digits, - and single _ (tools are named <server>__<tool>)';
  }
  if (typeof config !== 'object' || config === null) return 'settings must be an object';
  const unknown = Object.keys(config).filter((key) => !KNOWN_FIELDS.has(key));
  if (unknown.length > 0) return `unknown setting ${unknown.join(', ')}`;
  if (Boolean(config.command) === Boolean(config.url)) return 'give either "command" (stdio) or "url" (HTTP)';
  if (config.url) {
    try {
      const url = new URL(config.url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return `"url" must be http(s), got ${config.url}`;
    } catch {
      return `"url" is not a URL: ${config.url}`;
    }
  }
  if (config.args !== undefined && !isStringArray(config.args)) return '"args" must be a list of strings';
  if (config.tools !== undefined && !isStringArray(config.tools))
    return '"tools" must be a list of tool names';
  if (config.session !== undefined && config.session !== 'shared' && config.session !== 'conversation') {
    return '"session" is "shared" or "conversation"';
  }
  const approval = config.requiresApproval;
  if (approval !== undefined && typeof approval !== 'boolean' && !isStringArray(approval)) {
    return '"requiresApproval" is true, false or a list of tool names';
  }
  const atMostOnce = config.atMostOnce;
  if (atMostOnce !== undefined && typeof atMostOnce !== 'boolean' && !isStringArray(atMostOnce)) {
    return '"atMostOnce" is true, false or a list of tool names';
  }
  return undefined;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
