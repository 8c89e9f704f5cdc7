import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScheduledPromptRun } from '../../src/contract/types/conversation.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { replayAndRecord } from '../support/fixtures.ts';

const POLL = { timeout: 30_000, interval: 500 };

function yiem(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args],
      { timeout: 100_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('prompt schedules', () => {
  let agent: TestAgent;
  let connection: string[];
  beforeAll(async () => {
    agent = await startTestAgent();
    agent.model.respond((request) => {
      const last = request.body.messages.at(-1) as { content?: unknown } | undefined;
      return { kind: 'text', text: `Done: ${String(last?.content)}` };
    });
    connection = ['--address', agent.address, '--task-queue', agent.taskQueue];
  });
  afterAll(async () => agent?.close());

  it('yiem schedule create sends the prompt to an existing conversation on every run; list shows it, delete stops it', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Report.' });
    const scheduleId = `report-${randomUUID()}`;
    const created = await yiem([
      'schedule',
      'create',
      scheduleId,
      'Daily report please',
      '--every',
      '2s',
      '--conversation',
      conversation.id,
      ...connection,
    ]);
    expect(created).toMatchObject({
      code: 0,
      stdout: `Created schedule ${scheduleId}: every 2s, to conversation ${conversation.id}.\n`,
    });
    try {
      await expect.poll(async () => (await conversation.status()).turn, POLL).toBeGreaterThanOrEqual(2);
      const { info } = await agent.client.client.schedule.getHandle(scheduleId).describe();
      const firstRun = info.recentActions[0]?.action.workflow.workflowId ?? '';
      await replayAndRecord(
        agent.client.client.workflow.getHandle(firstRun),
        'scheduled-prompt-to-conversation',
      );
      const listed = await yiem(['schedule', 'list', ...connection]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(`${scheduleId}  every 2s  to conversation ${conversation.id}  next `);
      expect(listed.stdout).toContain('"Daily report please"');
    } finally {
      const deleted = await yiem(['schedule', 'delete', scheduleId, ...connection]);
      expect(deleted).toMatchObject({ code: 0, stdout: `Deleted schedule ${scheduleId}.\n` });
    }
    const messages = await conversation.messages();
    expect(messages.slice(0, 4)).toMatchObject([
      { role: 'user', content: 'Daily report please' },
      { role: 'assistant', content: 'Done: Daily report please' },
      { role: 'user', content: 'Daily report please' },
      { role: 'assistant', content: 'Done: Daily report please' },
    ]);
    await expect
      .poll(async () => (await agent.client.schedules.list()).map((schedule) => schedule.id), POLL)
      .not.toContain(scheduleId);
    await conversation.end();
  });

  it('a schedule with a new conversation per run starts one on each run, answers the prompt in it and ends it', async () => {
    const scheduleId = `digest-${randomUUID()}`;
    await agent.client.schedules.create({
      id: scheduleId,
      text: 'Write the digest',
      every: '2s',
      newConversation: { systemPrompt: 'You write digests.', title: 'Morning digest' },
    });
    let runs: string[] = [];
    try {
      await expect
        .poll(async () => {
          runs =
            (await agent.client.schedules.list()).find((each) => each.id === scheduleId)?.recentRuns ?? [];
          return runs.length;
        }, POLL)
        .toBeGreaterThanOrEqual(2);
    } finally {
      await agent.client.schedules.delete(scheduleId);
    }
    const conversationIds = new Set<string>();
    for (const run of runs.slice(0, 2)) {
      const result = (await agent.client.client.workflow.getHandle(run).result()) as ScheduledPromptRun;
      expect(result).toMatchObject({
        conversationId: `conversation-${run}`,
        turn: { status: 'completed', reply: 'Done: Write the digest' },
      });
      conversationIds.add(result.conversationId);
      if (conversationIds.size === 1) {
        await replayAndRecord(
          agent.client.client.workflow.getHandle(run),
          'scheduled-prompt-new-conversation',
        );
      }
      const conversation = agent.client.getConversation(result.conversationId);
      expect(await conversation.messages()).toMatchObject([
        { role: 'user', content: 'Write the digest' },
        { role: 'assistant', content: 'Done: Write the digest' },
      ]);
      const description = await conversation.handle.describe();
      expect(description.status.name).toBe('COMPLETED');
      expect(await description.staticSummary()).toBe('Morning digest');
    }
    expect(conversationIds.size).toBe(2);
  });

  it('a run whose conversation is gone fails naming the conversation', async () => {
    const scheduleId = `orphan-${randomUUID()}`;
    const missing = `conversation-gone-${randomUUID()}`;
    await agent.client.schedules.create({
      id: scheduleId,
      text: 'Anyone there?',
      every: '2s',
      conversationId: missing,
    });
    const schedule = agent.client.client.schedule.getHandle(scheduleId);
    let run = '';
    try {
      await expect
        .poll(async () => {
          run = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId ?? '';
          return run;
        }, POLL)
        .not.toBe('');
    } finally {
      await schedule.delete();
    }
    const failure = await agent.client.client.workflow
      .getHandle(run)
      .result()
      .catch((error: { cause?: Error }) => error.cause?.message);
    expect(failure).toContain(`The scheduled prompt could not reach conversation ${missing}`);
  });

  it('refuses a schedule without a timetable or a target, naming what is missing', async () => {
    await expect(
      agent.client.schedules.create({ id: `bad-${randomUUID()}`, text: 'hi', conversationId: 'c' }),
    ).rejects.toThrow('either every (an interval) or cron');
    await expect(
      agent.client.schedules.create({ id: `bad-${randomUUID()}`, text: 'hi', every: '1h' }),
    ).rejects.toThrow('either conversationId');
  });
});
