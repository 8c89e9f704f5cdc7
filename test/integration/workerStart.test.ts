import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';

const TSX_LOADER = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const PLAIN_WORKER = fileURLToPath(new URL('../support/plainWorker.ts', import.meta.url));

/** Everything a user's `createAgentWorker` script prints from its start to its stop. */
async function outputOfWorkerScript(env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, PLAIN_WORKER], {
    env: {
      ...process.env,
      ...env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TASK_QUEUE: `plain-${randomUUID()}`,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('READY')) child.stdin.end('stop\n');
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
});
