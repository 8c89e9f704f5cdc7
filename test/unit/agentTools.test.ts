import { describe, expect, it } from 'vitest';
import { isSensitivePath } from '../../src/cli/readUserFile.ts';
import { agentTool, callbackTool, handoffTool } from '../../src/contract/agents.ts';
import { createAgentWorker } from '../../src/worker/worker.ts';

describe('agent, handoff and callback tools', () => {
  const researcher = {
    name: 'researcher',
    description: 'Looks things up',
    systemPrompt: 'Research.',
    tools: ['lookup'],
  };

  it('declare where they run and have no execute', () => {
    expect(agentTool(researcher)).toMatchObject({
      name: 'researcher',
      parallelToolExecute: true,
      runner: { kind: 'subAgent', agent: researcher },
      inputSchema: { required: ['task'] },
    });
    expect(handoffTool(researcher)).toMatchObject({
      name: 'transfer_to_researcher',
      runner: { kind: 'handoff' },
    });
    const tool = callbackTool({
      name: 'ask',
      label: 'Ask',
      description: 'Asks',
      inputSchema: { type: 'object' },
    });
    expect(tool.runner).toEqual({ kind: 'callback', timeout: '2 minutes' });
    for (const workflowTool of [agentTool(researcher), handoffTool(researcher), tool]) {
      expect(workflowTool).not.toHaveProperty('execute');
    }
  });

  it('refuse to start a worker whose agent is given a tool it does not register', async () => {
    await expect(
      createAgentWorker({
        tools: { builtinTools: false, tools: [agentTool(researcher)] },
        connection: { address: '127.0.0.1:1' },
      }),
    ).rejects.toThrow(
      'Agent "researcher" (tool "researcher") is given tools this worker does not register: lookup',
    );
  });
});

describe('which files the chat asks about before reading', () => {
  it.each([
    ['notes/todo.txt', false],
    ['README.md', false],
    ['.env', true],
    ['config/.env.local', true],
    ['../outside.txt', true],
    ['.ssh/id_ed25519', true],
    ['certs/server.pem', true],
    ['my-passwords.txt', true],
  ])('%s → %s', (relative, sensitive) => {
    expect(isSensitivePath(relative)).toBe(sensitive);
  });
});
