import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { closedPort } from '../support/ports.ts';

/** This process's environment without the variables that name a model. */
function withoutModel(): NodeJS.ProcessEnv {
  const { OPENAI_BASE_URL: _url, OPENAI_API_KEY: _key, YIEM_MODEL: _model, ...env } = process.env;
  return env;
}

function yiem(args: string[], env = withoutModel()) {
  return spawn(process.execPath, [...YIEM_FROM_SOURCES, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * What the process printed once `text` is among it. Its stdout keeps being read: a pipe closed
 * early would fail the worker's next line (EPIPE).
 */
function untilPrinted(child: ChildProcessByStdio<null, Readable, Readable>, text: string): Promise<string> {
  let stdout = '';
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes(text)) resolve(stdout);
    });
    child.once('exit', (code) =>
      reject(new Error(`yiem worker exited (${code}) before printing "${text}": ${stdout}`)),
    );
  });
}

describe('yiem worker: its model and its terminal', () => {
  it('--help names the variables that name the model', async () => {
    const child = yiem(['worker', '--help']);
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    await once(child, 'exit');
    for (const variable of ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'YIEM_MODEL'])
      expect(stdout).toContain(variable);
    expect(stdout).toContain('offline demo model');
  });

  it('says it uses the offline demo model, and the demo answers', async () => {
    const address = inject('temporalAddress');
    const taskQueue = `demo-worker-${randomUUID()}`;
    const child = yiem(['worker', '--address', address, '--task-queue', taskQueue]);
    const client = new AgentClient({ address, taskQueue });
    try {
      const stdout = await untilPrinted(child, 'Payload store:');
      expect(stdout).toContain(
        'No model endpoint set (OPENAI_BASE_URL, OPENAI_API_KEY, YIEM_MODEL): using the offline demo model',
      );
      expect(stdout).toMatch(/model yiem-demo at http:\/\/127\.0\.0\.1:\d+/);
      const conversation = await client.startConversation({ systemPrompt: '' });
      const result = await conversation.send('hello');
      expect(result.reply).toContain('I am the offline demo model');
      await conversation.end();
    } finally {
      await client.close();
      child.kill('SIGINT');
      await once(child, 'exit');
    }
  });

  it('prints a failed model call as one line, in full in its log file', async () => {
    const address = inject('temporalAddress');
    const taskQueue = `failing-model-${randomUUID()}`;
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-worker-log-'));
    const env = {
      ...withoutModel(),
      OPENAI_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`,
      OPENAI_API_KEY: 'unused',
      YIEM_DATA_DIR: dataDir,
    };
    const child = yiem(['worker', '--address', address, '--task-queue', taskQueue], env);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const client = new AgentClient({ address, taskQueue });
    try {
      await untilPrinted(child, 'Worker log:');
      const conversation = await client.startConversation({
        systemPrompt: '',
        modelPolicy: { retry: { maximumAttempts: 1 } },
      });
      const result = await conversation.send('hello');
      expect(result.status).toBe('failed');
      const logFile = path.join(dataDir, 'logs', `worker-${taskQueue}.log`);
      await expect.poll(() => stderr, { timeout: 10_000 }).toContain(`(details in ${logFile})`);
      const warnings = stderr.split('\n').filter((line) => line.includes('Activity failed'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^worker WARN: Activity failed \(callModel\): /);
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(await readFile(logFile, 'utf8')).toMatch(/Activity failed[\s\S]*\n\s+at /);
      await conversation.end();
    } finally {
      await client.close();
      child.kill('SIGINT');
      await once(child, 'exit');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
