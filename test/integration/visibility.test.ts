import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
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
      { type: 'modelRouting', summary: "the worker's models" },
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

  it('records one marker per patch a run uses (deliveries, the model routing, the context tail and its sink, the named waits of the Web UI) and upserts a search attribute only when it changes', async () => {
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
    // Deliveries from the first message on, the worker's models asked at the first turn, the model
    // calls' context tail and its sink from the first model call on, the named waits at the first wait.
    expect(patches).toEqual([
      'yiem-delivery',
      'yiem-model-routing',
      'yiem-context-tail',
      'yiem-context-sink',
      'yiem-named-waits',
    ]);
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
      'TemporalChangeVersion=yiem-delivery,yiem-model-routing',
      'TemporalChangeVersion=yiem-context-tail,yiem-delivery,yiem-model-routing',
      'TemporalChangeVersion=yiem-context-sink,yiem-context-tail,yiem-delivery,yiem-model-routing',
      'YiemStatus=idle',
      'YiemStatus=running YiemTurns=2',
      'YiemStatus=awaitingApproval',
      'TemporalChangeVersion=yiem-context-sink,yiem-context-tail,yiem-delivery,yiem-model-routing,yiem-named-waits',
      'YiemStatus=running',
      'YiemStatus=idle',
      'YiemStatus=ended',
    ]);
  });

  it('with liveSearchAttributes false, lists the conversation by its agent and upserts nothing, a fork of it neither', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Hi!' }, { kind: 'text', text: 'Again.' });
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      agent: 'quiet',
      liveSearchAttributes: false,
    });
    await conversation.send('hello');
    const fork = await conversation.fork({ atTurn: 2 });
    await fork.send('once more');
    for (const each of [conversation, fork]) {
      await each.end();
      const events = (await each.handle.fetchHistory()).events ?? [];
      const upserted = events.flatMap((event) =>
        Object.keys(
          event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {},
        ),
      );
      expect(upserted.filter((key) => key.startsWith('Yiem'))).toEqual([]);
      await expect
        .poll(async () => listed(each.id), POLL)
        .toMatchObject({ agent: 'quiet', status: undefined, turns: undefined, executionStatus: 'COMPLETED' });
    }
  });
});
