import { execFile } from 'node:child_process';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationRefusedError } from '../../src/client/errors.ts';
import { createAgentWorker } from '../../src/worker/worker.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { closedPort } from '../support/ports.ts';

const PAUSED = 'This conversation is paused by an operator and refuses new messages until it is resumed';

function yiem(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
    );
  });
}

describe('what a refused Update says', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent();
  });
  afterAll(async () => {
    await agent.close();
  });

  it("names the conversation and the workflow's reason in the library's error", async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await conversation.pause({ prompts: 'refuse' });
    const error = await conversation.send('let me in').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConversationRefusedError);
    // Still Temporal's own error, with the workflow's failure as its cause.
    expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((error as ConversationRefusedError).message).toBe(
      `Conversation ${conversation.id} refused the message: ${PAUSED}`,
    );
    expect(error).toMatchObject({ conversationId: conversation.id, request: 'prompt', reason: PAUSED });
    expect((error as ConversationRefusedError).cause?.message).toBe(PAUSED);
    await conversation.handle.terminate('test done');
  });

  it('prints the reason from `yiem send`, not "Workflow Update failed"', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await conversation.pause({ prompts: 'refuse' });
    const sent = await yiem([
      'send',
      'let me in',
      '--id',
      conversation.id,
      '--address',
      agent.address,
      '--task-queue',
      agent.taskQueue,
    ]);
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain(`yiem: Conversation ${conversation.id} refused the message: ${PAUSED}`);
    expect(sent.stderr).not.toContain('Workflow Update failed');
    await conversation.handle.terminate('test done');
  });

  it('names the approval nothing waits for', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await expect(conversation.approve('call_none')).rejects.toThrow(
      `Conversation ${conversation.id} refused the decision: No tool call "call_none" is waiting for approval`,
    );
    await conversation.handle.terminate('test done');
  });
});

describe('a worker whose Temporal address is wrong', () => {
  it('fails naming the address and what to start', async () => {
    const address = `127.0.0.1:${await closedPort()}`;
    const starting = createAgentWorker({
      connection: { address, taskQueue: 'nowhere' },
      models: { model: { baseURL: 'http://127.0.0.1:1/v1', model: 'unused' } },
    });
    await expect(starting).rejects.toThrow(`Temporal at ${address} is unreachable (`);
    await expect(starting).rejects.toThrow('Start a server ("yiem server" or "yiem dev")');
  });
});
