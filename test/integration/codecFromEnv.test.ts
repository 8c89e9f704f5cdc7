import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { type AgentWorker, createAgentWorker } from '../../src/worker/worker.ts';
import { workflowBundle } from '../support/agentHarness.ts';

describe('encryption configured by the environment alone', () => {
  const env = { YIEM_CODEC_KEYS: `env-key:${randomBytes(32).toString('base64')}` };
  const taskQueue = `codec-env-${randomUUID()}`;
  let model: ScriptedModel;
  let agent: AgentWorker;
  let running: Promise<void>;
  beforeAll(async () => {
    model = await startScriptedModel();
    agent = await createAgentWorker({
      env,
      connection: { address: inject('temporalAddress'), taskQueue },
      tools: { builtinTools: false },
      models: { model: { baseURL: model.baseURL, apiKey: 'k', model: 'scripted' } },
      worker: { workflowBundle: await workflowBundle() },
    });
    running = agent.run();
  });
  afterAll(async () => {
    await agent?.shutdown();
    await running;
    await model?.close();
  });

  it('YIEM_CODEC_KEYS makes worker and client encrypt; a client without the keys cannot read', async () => {
    const client = new AgentClient({ env, address: inject('temporalAddress'), taskQueue });
    const keyless = new AgentClient({ env: {}, address: inject('temporalAddress'), taskQueue });
    try {
      model.enqueue({ kind: 'text', text: 'sealed reply' });
      const conversation = await client.startConversation({ systemPrompt: 'Sealed.' });
      expect(await conversation.send('hello')).toMatchObject({ status: 'completed', reply: 'sealed reply' });
      const history = await conversation.handle.fetchHistory();
      const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      expect(Buffer.from(input?.metadata?.encoding ?? []).toString()).toBe('binary/encrypted');
      expect(Buffer.from(input?.metadata?.['encryption-key-id'] ?? []).toString()).toBe('env-key');
      await expect(keyless.getConversation(conversation.id).messages()).rejects.toThrow();
      await conversation.end();
    } finally {
      await client.close();
      await keyless.close();
    }
  });
});
