import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { createAgentWorker } from '../../src/worker/worker.ts';
import { workflowBundle } from '../support/agentHarness.ts';

describe('worker and client configured by a Temporal config profile', () => {
  let dir: string;
  let model: ScriptedModel;
  let env: Record<string, string>;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-profile-'));
    const configFile = path.join(dir, 'temporal.toml');
    await writeFile(
      configFile,
      [
        '[profile.default]',
        'address = "127.0.0.1:1"',
        '[profile.local]',
        `address = "${inject('temporalAddress')}"`,
        'namespace = "default"',
      ].join('\n'),
    );
    // Only the config file: no TEMPORAL_ADDRESS, so the profile is what finds the server.
    env = { HOME: dir, TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'local' };
    model = await startScriptedModel();
  });
  afterAll(async () => {
    await model?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reaches the server named in the selected profile', async () => {
    const taskQueue = `profile-${randomUUID()}`;
    const agent = await createAgentWorker({
      env,
      connection: { taskQueue },
      tools: { builtinTools: false },
      models: { model: { baseURL: model.baseURL, apiKey: 'k', model: 'scripted' } },
      worker: { workflowBundle: await workflowBundle() },
    });
    const running = agent.run();
    const client = new AgentClient({ env, taskQueue });
    try {
      model.enqueue({ kind: 'text', text: 'hello via profile' });
      const conversation = await client.startConversation({ systemPrompt: 'Profiles.' });
      expect(await conversation.send('hi')).toMatchObject({
        status: 'completed',
        reply: 'hello via profile',
      });
      await conversation.end();
    } finally {
      await agent.shutdown();
      await running;
      await client.close();
    }
  });
});
