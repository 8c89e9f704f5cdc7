import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';

/** This process's environment without the variables that name a model. */
function withoutModel(): NodeJS.ProcessEnv {
  const { OPENAI_BASE_URL: _url, OPENAI_API_KEY: _key, YIEM_MODEL: _model, ...env } = process.env;
  return env;
}

function yiem(args: string[], env = withoutModel()) {
  return spawn(process.execPath, [...YIEM_FROM_SOURCES, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('yiem worker with no model named', () => {
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
      let stdout = '';
      child.stdout.setEncoding('utf8');
      for await (const chunk of child.stdout) {
        stdout += chunk;
        if (stdout.includes('Payload store:')) break;
      }
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
});
