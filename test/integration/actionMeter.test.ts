import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ActionCounts, actionsBetween, readActions, totalActions } from '../../bench/actions.ts';
import type { DevServer } from '../../src/infrastructure/server/index.ts';
import type { TestAgent } from '../support/agentHarness.ts';
import { runYiem } from '../support/cli.ts';
import { type MeteredAgent, startMeteredAgent } from '../support/meteredAgent.ts';

/** The dev server's metrics publish their counters about once a second; two flushes later a step is in. */
const METRICS_SETTLE_MS = 2_500;

describe('the Action meter', () => {
  let server: DevServer;
  let agent: TestAgent;
  let metered: MeteredAgent | undefined;
  beforeAll(async () => {
    metered = await startMeteredAgent();
    ({ server, agent } = metered);
  });
  afterAll(async () => metered?.close());

  /** What the server billed for `step`, by action type, once its counters caught up. */
  async function billedDuring(step: () => Promise<unknown>): Promise<ActionCounts> {
    await sleep(METRICS_SETTLE_MS);
    const before = await readActions(server.metricsUrl as string);
    await step();
    await sleep(METRICS_SETTLE_MS);
    return actionsBetween(before, await readActions(server.metricsUrl as string));
  }

  it("reports each turn's Actions in its result and the status, as many as the server billed", async () => {
    agent.model.respond((request) =>
      String(request.body.messages.at(-1)?.content).startsWith('use echo')
        ? {
            kind: 'toolCalls',
            toolCalls: [
              { id: 'call_1', name: 'echo', arguments: { text: 'ping' } },
              { id: 'call_2', name: 'echo', arguments: { text: 'pong' } },
            ],
          }
        : { kind: 'text', text: `reply ${agent.model.requestCount}` },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    const first = await conversation.send('one');
    let text = first;
    const textBilled = await billedDuring(async () => {
      text = await conversation.send('two');
    });
    let tool = first;
    const toolBilled = await billedDuring(async () => {
      tool = await conversation.send('use echo twice');
    });

    // A text turn: its prompt Update, the model call and the two status upserts.
    expect(text.spend?.actions).toBe(4);
    expect(text.spend?.actions).toBe(totalActions(textBilled));
    // A tool turn: two more model calls' worth: the second model call and the two tool calls.
    expect(tool.spend?.actions).toBe(7);
    expect(tool.spend?.actions).toBe(totalActions(toolBilled));
    // The first turn of a run carries the run's start and its one look-up of the worker's models.
    expect(first.spend?.actions).toBe(6);

    const status = await conversation.status();
    expect(status.spend.turn.actions).toBe(7);
    expect(status.spend.conversation.actions).toBe(6 + 4 + 7);
    await conversation.end();
  });

  it("counts a retried model call's second attempt, which the server bills again", async () => {
    agent.model.respond(() => ({ kind: 'text', text: 'warm' }));
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    await conversation.send('one');
    let attempts = 0;
    agent.model.respond(() =>
      ++attempts === 1 ? { kind: 'error', status: 500 } : { kind: 'text', text: 'after a retry' },
    );
    let retried: Awaited<ReturnType<typeof conversation.send>> | undefined;
    const billed = await billedDuring(async () => {
      retried = await conversation.send('two');
    });
    expect(retried?.reply).toBe('after a retry');
    expect(attempts).toBe(2);
    // A text turn's 4, and the model call's second attempt.
    expect(retried?.spend?.actions).toBe(5);
    expect(totalActions(billed)).toBe(5);
    await conversation.end();
  });

  it('counts a batch of 20 calls as one activity; the server bills its heartbeats besides', async () => {
    const calls = Array.from({ length: 20 }, (_, index) => ({
      id: `call_${index}`,
      name: 'batchedEcho',
      arguments: { text: String(index) },
    }));
    agent.model.respond((request) =>
      String(request.body.messages.at(-1)?.content).startsWith('echo all')
        ? { kind: 'toolCalls', toolCalls: calls }
        : { kind: 'text', text: 'all echoed' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Be brief.',
      toolExecution: 'sequential',
    });
    await conversation.send('warm up');
    let batched: Awaited<ReturnType<typeof conversation.send>> | undefined;
    const billed = await billedDuring(async () => {
      batched = await conversation.send('echo all twenty');
    });
    expect(batched?.reply).toBe('all echoed');
    // The prompt Update, two model calls, two status upserts and one activity for the 20 calls.
    expect(batched?.spend?.actions).toBe(6);
    // The server bills besides the batch's heartbeats (its first checkpoint at least), and, once per
    // run, the patch's marker and its TemporalChangeVersion upsert, which the meter leaves out.
    const { grpc_RecordActivityTaskHeartbeat: heartbeats = 0, ...rest } = billed;
    expect(heartbeats).toBeGreaterThanOrEqual(1);
    expect(rest).toEqual({
      message_UpdateWorkflowExecution_Acceptance: 1,
      command_ScheduleActivityTask: 3,
      command_UpsertWorkflowSearchAttributes: 2 + 1,
      command_BatchMarkers: 1,
    });
    await conversation.end();
  });

  it('prints the Actions with their price beside the tokens in `yiem send` and `yiem status`', async () => {
    agent.model.respond(() => ({ kind: 'text', text: 'hello there' }));
    // The CLI runs with this process's environment.
    process.env.YIEM_ACTION_PRICE = '25';
    const queue = ['--task-queue', agent.taskQueue];
    const sent = await runYiem(['send', ...queue, '--id', 'meter-cli', 'hi'], server.address);
    expect(sent.stdout.trim()).toBe('agent> hello there');
    // A new conversation's first turn, 6 Actions, at 25 per million.
    expect(sent.stderr).toMatch(/turn spent: 1 model calls · 0 tool calls · .* · 6 Actions \(0\.00015\) · /);
    const status = await runYiem(['status', ...queue, 'meter-cli'], server.address);
    delete process.env.YIEM_ACTION_PRICE;
    expect(status.stdout).toMatch(/spent: .* · 6 Actions \(0\.00015\) · /);
  });
});
