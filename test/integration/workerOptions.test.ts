import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { type AgentWorkerOptions, createAgentWorker } from '../../src/worker/worker.ts';
import { workflowBundle } from '../support/agentHarness.ts';

/** Starts a worker with `options` on a new queue and sends it one prompt; its reply. */
async function answerOnce(
  model: ScriptedModel,
  options: (taskQueue: string) => AgentWorkerOptions,
): Promise<string | undefined> {
  const taskQueue = `options-${randomUUID()}`;
  const agent = await createAgentWorker(options(taskQueue));
  const running = agent.run();
  const client = new AgentClient({ address: inject('temporalAddress'), taskQueue });
  try {
    model.enqueue({ kind: 'text', text: `hello from ${taskQueue}` });
    const conversation = await client.startConversation({ systemPrompt: 'Options.' });
    const result = await conversation.send('hi');
    await conversation.end();
    return result.reply;
  } finally {
    await agent.shutdown();
    await running;
    await client.close();
  }
}

describe('createAgentWorker options', () => {
  let model: ScriptedModel;
  let bundle: { code: string };
  beforeAll(async () => {
    model = await startScriptedModel();
    bundle = await workflowBundle();
  });
  afterAll(async () => {
    await model?.close();
  });
  const deprecations = (warn: { mock: { calls: unknown[][] } }) =>
    warn.mock.calls.map(([text]) => String(text)).filter((text) => text.includes('deprecated'));

  it('runs a worker given its options by group, without a deprecation warning', async () => {
    const warn = vi.spyOn(console, 'warn');
    try {
      const reply = await answerOnce(model, (taskQueue) => ({
        connection: { address: inject('temporalAddress'), taskQueue },
        models: { model: { baseURL: model.baseURL, apiKey: 'k', model: 'scripted' } },
        tools: { builtinTools: false },
        worker: { workflowBundle: bundle },
      }));
      expect(reply).toMatch(/^hello from options-/);
      expect(deprecations(warn)).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('still runs a worker given the old flat names, warning once per name', async () => {
    const warn = vi.spyOn(console, 'warn');
    try {
      const flat = (taskQueue: string): AgentWorkerOptions => ({
        address: inject('temporalAddress'),
        taskQueue,
        model: { baseURL: model.baseURL, apiKey: 'k', model: 'scripted' },
        builtinTools: false,
        workflowBundle: bundle,
      });
      expect(await answerOnce(model, flat)).toMatch(/^hello from options-/);
      expect(await answerOnce(model, flat)).toMatch(/^hello from options-/);
      expect(deprecations(warn).sort()).toEqual([
        'yiem-agent: AgentWorkerOptions.address is deprecated; use connection.address',
        'yiem-agent: AgentWorkerOptions.builtinTools is deprecated; use tools.builtinTools',
        'yiem-agent: AgentWorkerOptions.model is deprecated; use models.model',
        'yiem-agent: AgentWorkerOptions.taskQueue is deprecated; use connection.taskQueue',
        'yiem-agent: AgentWorkerOptions.workflowBundle is deprecated; use worker.workflowBundle',
      ]);
    } finally {
      warn.mockRestore();
    }
  });
});
