import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';

const TSX_LOADER = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const PLAIN_WORKER = fileURLToPath(new URL('../support/plainWorker.ts', import.meta.url));

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-worker-start-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/**
 * A user's `createAgentWorker` script on `taskQueue`, with its output so far; `during` runs once it
 * is ready, then the script is told to stop. Resolves with everything it printed.
 */
async function outputOfWorkerScript(
  env: Record<string, string> = {},
  taskQueue = `plain-${randomUUID()}`,
  during: () => Promise<void> = async () => {},
): Promise<string> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, PLAIN_WORKER], {
    env: {
      ...process.env,
      YIEM_DATA_DIR: dataDir,
      ...env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TASK_QUEUE: taskQueue,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const ready = !output.includes('READY');
    output += chunk.toString();
    if (ready && output.includes('READY')) void during().finally(() => child.stdin.end('stop\n'));
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const [code] = await once(child, 'exit');
  expect(code, output).toBe(0);
  return output;
}

describe("a user's createAgentWorker", () => {
  it('prints nothing of its own by default: no bundler statistics, no SDK state changes', async () => {
    const output = await outputOfWorkerScript();
    expect(output.trim()).toBe('READY');
  });

  it('shows the SDK log with YIEM_WORKER_LOG_LEVEL=INFO', async () => {
    const output = await outputOfWorkerScript({ YIEM_WORKER_LOG_LEVEL: 'INFO' });
    expect(output).toContain('Workflow bundle created');
    expect(output).toContain('Worker state changed');
  });

  it('prints a failed model call as one line, in full in its log file', async () => {
    const taskQueue = `plain-failing-model-${randomUUID()}`;
    const client = new AgentClient({ address: inject('temporalAddress'), taskQueue });
    let status: string | undefined;
    const output = await outputOfWorkerScript({}, taskQueue, async () => {
      const conversation = await client.startConversation({
        systemPrompt: '',
        modelPolicy: { retry: { maximumAttempts: 1 } },
      });
      status = (await conversation.send('hello')).status;
      await conversation.end();
    }).finally(() => client.close());
    expect(status).toBe('failed');
    const logFile = path.join(dataDir, 'logs', `worker-${taskQueue}.log`);
    const warnings = output.split('\n').filter((line) => line.includes('Activity failed'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^worker WARN: Activity failed \(callModel\): .*\(details in .*\)$/);
    expect(warnings[0]).toContain(`(details in ${logFile})`);
    expect(output).not.toMatch(/^\s+at /m);
    expect(await readFile(logFile, 'utf8')).toMatch(/Activity failed[\s\S]*\n\s+at /);
  });
});
