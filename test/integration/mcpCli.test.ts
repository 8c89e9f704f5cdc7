import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { counterServer } from '../support/mcpServers.ts';

/** The environment of a user who has set no model endpoint. */
function cleanEnv(): NodeJS.ProcessEnv {
  const { OPENAI_BASE_URL: _url, OPENAI_API_KEY: _key, YIEM_MODEL: _model, ...env } = process.env;
  return env;
}

function yiem(args: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args],
      { env: cleanEnv(), timeout: 90_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

describe('yiem worker --mcp and yiem dev --mcp', () => {
  const address = (): string => inject('temporalAddress');
  let dir: string;
  let goodConfig: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-mcp-cli-'));
    goodConfig = path.join(dir, 'mcp.json');
    await writeFile(goodConfig, JSON.stringify({ mcpServers: { counter: counterServer() } }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('refuses a config file it cannot use, naming the file and the problem', async () => {
    const bad = path.join(dir, 'bad.json');
    await writeFile(
      bad,
      JSON.stringify({ mcpServers: { counter: { command: 'x', url: 'http://127.0.0.1:1/' } } }),
    );
    const run = await yiem(['worker', '--address', address(), '--mcp', bad]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `yiem: MCP config ${bad}: MCP server "counter": give either "command" (stdio) or "url" (HTTP)`,
    );
  });

  it('worker starts the servers of the file and serves their tools', async () => {
    const taskQueue = `mcp-cli-${randomUUID()}`;
    const child = spawn(
      process.execPath,
      [
        ...YIEM_FROM_SOURCES,
        'worker',
        '--address',
        address(),
        '--task-queue',
        taskQueue,
        '--no-workflows',
        '--no-builtin-tools',
        '--mcp',
        goodConfig,
      ],
      { env: cleanEnv(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const banner = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          if (line.startsWith('Worker on task queue')) resolve(line);
        });
        void exited.then((code) => reject(new Error(`yiem worker exited with ${code}`)));
      });
      expect(banner).toBe(
        `Worker on task queue ${taskQueue} (tools only): counter__increment, counter__addTool, counter__sleep, counter__large, counter__crash`,
      );
    } finally {
      child.kill('SIGTERM');
    }
    // SIGTERM shuts the worker down cleanly, and its MCP servers with it.
    expect(await exited).toBe(0);
  });

  it('dev offers the tools of the file in the chat (/tools)', async () => {
    const run = await yiem(
      ['dev', '--address', address(), '--task-queue', `mcp-dev-${randomUUID()}`, '--mcp', goodConfig],
      '/tools\n/exit\n',
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('counter__increment');
    expect(run.stdout).toContain('getWeather');
  });
});
