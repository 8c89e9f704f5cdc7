import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { scheduledActivities } from '../support/history.ts';

const guarded: AgentTool = {
  name: 'guarded',
  label: 'Guarded',
  description: 'Needs approval',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: () => textResult('done'),
};

/** Visibility is eventually consistent: the listing catches up within moments. */
const POLL = { timeout: 15_000, interval: 200 };

describe('what the Web UI and `yiem list` show of a conversation', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [guarded] });
  });
  afterAll(async () => agent?.close());

  const listed = async (id: string, status?: 'idle' | 'running' | 'awaitingApproval' | 'ended') =>
    (await agent.client.listConversations(status ? { status } : {})).find((row) => row.id === id);

  it('titles the conversation, names the model of every model call, and keeps status and turns searchable', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Hi!' });
    const conversation = await agent.client.startConversation({
      systemPrompt: 'You are a travel agent.',
      agent: 'travel',
    });
    await conversation.send('hello');

    const description = await conversation.handle.describe();
    expect(await description.staticSummary()).toBe('travel · You are a travel agent.');
    const activities = await scheduledActivities(conversation.handle);
    expect(activities.map(({ type, summary }) => ({ type, summary }))).toEqual([
      { type: 'defaultModel', summary: "the worker's default model" },
      { type: 'callModel', summary: 'model scripted · turn 1' },
    ]);

    await expect
      .poll(async () => listed(conversation.id, 'idle'), POLL)
      .toMatchObject({
        status: 'idle',
        turns: 1,
        agent: 'travel',
      });
    await conversation.end();
    await expect.poll(async () => (await listed(conversation.id, 'ended'))?.status, POLL).toBe('ended');
    expect(await listed(conversation.id, 'idle')).toBeUndefined();
  });

  it('shows a conversation waiting for approval as awaitingApproval', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_g', name: 'guarded', arguments: {} }] },
      { kind: 'text', text: 'ok' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const turn = conversation.send('go');
    await expect.poll(async () => (await listed(conversation.id, 'awaitingApproval'))?.turns, POLL).toBe(1);
    await conversation.approve('call_g');
    await turn;
    await expect.poll(async () => (await listed(conversation.id))?.status, POLL).toBe('idle');
  });

  it('records one marker per patch a run uses (deliveries, the context tail, the named waits of the Web UI) and upserts a search attribute only when it changes', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'Hi!' },
      { kind: 'toolCalls', toolCalls: [{ id: 'call_g', name: 'guarded', arguments: {} }] },
      { kind: 'text', text: 'Done.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await conversation.send('hello');
    const second = conversation.send('go');
    await expect.poll(async () => (await conversation.status()).pendingApprovals.length, POLL).toBe(1);
    await conversation.approve('call_g');
    await second;
    await conversation.end();

    const events = (await conversation.handle.fetchHistory()).events ?? [];
    const markers = events.filter((event) => event.markerRecordedEventAttributes);
    const patches = markers.map((event) => {
      expect(event.markerRecordedEventAttributes?.markerName).toBe('core_patch');
      const patch = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
      return (defaultPayloadConverter.fromPayload(patch as never) as { id: string }).id;
    });
    // Deliveries from the first message on, the model calls' context tail from the first model call
    // on, the named waits at the first wait.
    expect(patches).toEqual(['yiem-delivery', 'yiem-context-tail', 'yiem-named-waits']);
    const upserts = events.flatMap((event) => {
      const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      if (!fields) return [];
      const decoded = Object.entries(fields).map(
        ([key, payload]) => `${key}=${String(defaultPayloadConverter.fromPayload(payload as never))}`,
      );
      return [decoded.sort().join(' ')];
    });
    expect(upserts).toEqual([
      // The SDK records each patch a run uses in Temporal's own change-version attribute.
      'TemporalChangeVersion=yiem-delivery',
      'YiemStatus=running YiemTurns=1',
      'TemporalChangeVersion=yiem-context-tail,yiem-delivery',
      'YiemStatus=idle',
      'YiemStatus=running YiemTurns=2',
      'YiemStatus=awaitingApproval',
      'TemporalChangeVersion=yiem-context-tail,yiem-delivery,yiem-named-waits',
      'YiemStatus=running',
      'YiemStatus=idle',
      'YiemStatus=ended',
    ]);
  });
});
