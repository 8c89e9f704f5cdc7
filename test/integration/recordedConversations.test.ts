import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textContent, textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { replayAndRecord } from '../support/fixtures.ts';

const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a key up',
  inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  parallelToolExecute: true,
  execute: (_id, args) => textResult(`value of ${String(args.key)}`),
};
const serial: AgentTool = { ...lookup, name: 'serial', parallelToolExecute: false };
const stop: AgentTool = {
  ...lookup,
  name: 'stop',
  execute: () => ({ content: [textContent('stopped')], details: {}, usage: null, terminate: true }),
};

const guarded: AgentTool = { ...lookup, name: 'guarded', requiresApproval: true };

/**
 * Conversations that take every path of the loop, replayed against today's code and recorded as
 * fixtures by `npm run fixtures:record` (replay.test.ts then replays them on every run).
 */
describe('conversations recorded as replay fixtures', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [lookup, serial, stop, guarded] });
  });
  afterAll(async () => agent?.close());

  it('replays a fresh conversation that uses every path of the loop', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'p1', name: 'lookup', arguments: { key: 'a' } },
          { id: 'p2', name: 'lookup', arguments: { key: 'b' } },
          { id: 's1', name: 'serial', arguments: { key: 'c' } },
          { id: 'bad', name: 'lookup', arguments: {} },
          { id: 'missing', name: 'nothing', arguments: {} },
        ],
      },
      { kind: 'text', text: 'first answer' },
      { kind: 'error', status: 400, message: 'bad request' },
      { kind: 'toolCalls', toolCalls: [{ id: 't1', name: 'stop', arguments: { key: 'x' } }] },
    );
    const conversation = await agent.client.startConversation({
      id: `replay-${Date.now()}`,
      systemPrompt: 'Replay me.',
      toolExecution: 'parallel',
    });
    expect((await conversation.send('one')).status).toBe('completed');
    expect((await conversation.send('two')).status).toBe('failed');
    await conversation.post('three');
    await expect
      .poll(async () => (await conversation.status()).lastTurn?.status, { timeout: 10_000 })
      .toBe('terminated');
    await conversation.end();
    await replayAndRecord(conversation.handle, 'conversation-all-paths');
  });

  it('replays a live conversation: streamed events, approvals approved, denied and timed out, the tools Update', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        text: 'Checking.',
        toolCalls: [
          { id: 'g1', name: 'guarded', arguments: { key: 'a' } },
          { id: 'g2', name: 'guarded', arguments: { key: 'b' } },
          { id: 'l1', name: 'lookup', arguments: { key: 'c' } },
        ],
      },
      { kind: 'text', text: 'first answer', dropAfterDeltas: 2, deltaDelayMs: 30 },
      { kind: 'text', text: 'first answer' },
      { kind: 'toolCalls', toolCalls: [{ id: 'g3', name: 'guarded', arguments: { key: 'd' } }] },
      { kind: 'text', text: 'second answer' },
    );
    const conversation = await agent.client.startConversation({
      id: `replay-live-${Date.now()}`,
      systemPrompt: 'Replay me live.',
      approvalTimeout: '1 second',
      modelPolicy: { retry: { initialInterval: '50 milliseconds', maximumAttempts: 3 } },
    });
    const events: string[] = [];
    const following = (async () => {
      for await (const event of conversation.events()) events.push(event.type);
    })();
    const turn = conversation.send('one');
    await expect
      .poll(async () => (await conversation.status()).pendingApprovals.length, { timeout: 15_000 })
      .toBe(2);
    await conversation.approve('g1');
    await conversation.deny('g2', 'not b');
    expect((await turn).reply).toBe('first answer');
    expect((await conversation.send('two')).reply).toBe('second answer');
    expect((await conversation.tools()).map((tool) => tool.name)).toContain('guarded');
    await conversation.end();
    await following;
    expect(events).toContain('approvalResolved');
    await replayAndRecord(conversation.handle, 'conversation-live-paths');
  });
});
