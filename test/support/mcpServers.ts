import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { McpServerConfig } from '../../src/contract/types/mcp.ts';

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
export function counterServer(env: Record<string, string> = {}): McpServerConfig {
  return { command: process.execPath, args: ['--import', 'tsx', COUNTER_SERVER], env };
}

/** The counter server over streamable HTTP on 127.0.0.1 (`port`, or a free one); resolves with its URL. */
export async function startHttpCounter(
  port = 0,
): Promise<{ url: string; port: number; process: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', COUNTER_SERVER, 'http', String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const listening = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const match = /^listening (\d+)$/.exec(line);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`counter server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${listening}/mcp`, port: Number(listening), process: child };
}
