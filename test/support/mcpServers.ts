import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { McpServerConfig } from '../../src/types.ts';

const require = createRequire(import.meta.url);
const COUNTER_SERVER = fileURLToPath(new URL('../fixtures/mcp/counterServer.ts', import.meta.url));

/** The official filesystem server (from npm), serving `root`. */
export function filesystemServer(root: string): McpServerConfig {
  return {
    command: process.execPath,
    args: [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), root],
  };
}

/** The official "everything" reference server (from npm), over stdio. */
export function everythingServer(): McpServerConfig {
  return {
    command: process.execPath,
    args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
  };
}

/** The tests' own counter server (test/fixtures/mcp/counterServer.ts), over stdio. */
export function counterServer(): McpServerConfig {
  return { command: process.execPath, args: ['--import', 'tsx', COUNTER_SERVER] };
}

export const COUNTER_SERVER_PATH = COUNTER_SERVER;
