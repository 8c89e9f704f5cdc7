import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { replayCheck } from '../../src/worker/replayCheck.ts';
import { startTestAgent, type TestAgent, workflowBundle } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';

const echoTool: AgentTool = {
  name: 'echo',
  label: 'Echo',
  description: 'Echoes its text back',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  parallelToolExecute: true,
  execute: (_id, args) => textResult(`echo: ${String(args.text)}`),
};

/** The conversation workflow with an unguarded timer added before its loop (test/support/workflows/). */
const CHANGED_WORKFLOWS = fileURLToPath(new URL('../support/workflows/extraTimer.ts', import.meta.url));

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

interface ExportedEvent {
  eventId: string;
  eventType: string;
  activityTaskScheduledEventAttributes?: { activityType: { name: string } };
}

describe('yiem export-histories and yiem replay-check', () => {
  let agent: TestAgent;
  let dir: string;
  let conversationId: string;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [echoTool] });
    dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-histories-'));
    agent.model.enqueue({
      kind: 'toolCalls',
      toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'hi' } }],
    });
    agent.model.enqueue({ kind: 'text', text: 'It echoed hi.' });
    const conversation = await agent.client.startConversation({ systemPrompt: 'Echo things.' });
    conversationId = conversation.id;
    await conversation.send('Echo hi');
    await conversation.end();
  });
  afterAll(async () => {
    await agent?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('exports a conversation from the server and replays it clean against this code', async () => {
    const exported = await yiem([
      'export-histories',
      dir,
      '--address',
      agent.address,
      '--query',
      `WorkflowId = '${conversationId}'`,
    ]);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain('Exported 1 run(s)');
    expect(await readdir(dir)).toEqual([expect.stringMatching(new RegExp(`^${conversationId}__.+\\.json$`))]);

    const checked = await yiem(['replay-check', dir]);
    expect(checked).toMatchObject({ code: 0, stdout: 'Replayed 1 histories: 1 passed, 0 failed.\n' });
  });

  it("reports every history a changed workflows module (--workflows) would break, naming each one's event", async () => {
    const [file = ''] = await readdir(dir);
    const history = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as { events: ExportedEvent[] };
    const checked = await yiem(['replay-check', dir, '--workflows', CHANGED_WORKFLOWS]);
    expect(checked.code).toBe(1);
    const runId = file.slice(conversationId.length + 2, -'.json'.length);
    const [, eventId, eventType] =
      new RegExp(
        `conversation ${conversationId} run ${runId}: nondeterminism at event (\\d+) \\((\\w+)\\)`,
      ).exec(checked.stdout) ?? [];
    const event = history.events.find((each) => each.eventId === eventId);
    expect(event?.eventType.replace(/^EVENT_TYPE_|_/g, '').toLowerCase()).toBe(eventType?.toLowerCase());
    expect(checked.stdout).toContain('Timer');
    expect(checked.stdout).toContain('Replayed 1 histories: 0 passed, 1 failed.');
  });

  it('reports a history the code no longer matches with its conversation, run and event, and exits 1', async () => {
    const [file] = await readdir(dir);
    const history = JSON.parse(await readFile(path.join(dir, file as string), 'utf8')) as {
      events: ExportedEvent[];
    };
    // As if the code that recorded it had scheduled another activity for the tool call than today's does.
    const toolCall = history.events.find(
      (event) => event.activityTaskScheduledEventAttributes?.activityType.name === 'executeTool',
    ) as ExportedEvent & Required<Pick<ExportedEvent, 'activityTaskScheduledEventAttributes'>>;
    toolCall.activityTaskScheduledEventAttributes.activityType.name = 'executeToolV0';
    await writeFile(path.join(dir, file as string), JSON.stringify(history));

    const checked = await yiem(['replay-check', dir]);
    expect(checked.code).toBe(1);
    const runId = (file as string).slice(conversationId.length + 2, -'.json'.length);
    expect(checked.stdout).toContain(
      `conversation ${conversationId} run ${runId}: nondeterminism at event ${toolCall.eventId} (ActivityTaskScheduled)`,
    );
    expect(checked.stdout).toContain("'executeToolV0'");
    expect(checked.stdout).toContain('Replayed 1 histories: 0 passed, 1 failed.');

    const report = await replayCheck(dir, { workflowBundle: await workflowBundle() });
    expect(report).toMatchObject({
      checked: 1,
      failures: [
        {
          conversationId,
          runId,
          nondeterministic: true,
          eventId: Number(toolCall.eventId),
          eventType: 'ActivityTaskScheduled',
        },
      ],
    });
  });
});
