import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { encodedBytes, largestPayload, storedHistory } from '../../bench/history.ts';
import { benchReply, largeResultTag, largeTurnAnswer, largeTurnText } from '../../bench/scriptedReplies.ts';
import { largeResultText } from '../../bench/tools.ts';
import { type MemoryUsage, startWorkerProcess, type WorkerHandle } from '../../bench/workerHandle.ts';
import { AgentClient } from '../../src/client/client.ts';
import { DEFAULT_PAYLOAD_THRESHOLD_BYTES } from '../../src/contract/limits.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { payloadStorage } from '../../src/infrastructure/storage/payloadStorage.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { workflowBundle } from '../support/agentHarness.ts';

const TURNS = 300;
const MESSAGE_BYTES = 100_000;
const TOOL_EVERY = 10;
const TOOL_KILOBYTES = 1024;
const TURNS_PER_RUN = 50;
const RESTART_AT = 150;
const REPLAY_AT = 175;

describe('a conversation far larger than any Temporal payload', () => {
  let model: ScriptedModel;
  let workDir: string;
  let bundlePath: string;
  let worker: WorkerHandle;
  let connection: Connection;
  let agents: AgentClient;
  let dataConverter: { externalStorage: ReturnType<typeof payloadStorage> };
  const address = inject('temporalAddress');
  const taskQueue = `large-${Date.now()}`;
  const startWorker = () =>
    startWorkerProcess({
      address,
      taskQueue,
      bundlePath,
      modelBaseURL: model.baseURL,
      crashHeartbeatTimeout: '30 seconds',
      payloadsDir: path.join(workDir, 'payloads'),
    });

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-large-'));
    bundlePath = path.join(workDir, 'workflows.js');
    await writeFile(bundlePath, (await workflowBundle()).code);
    model = await startScriptedModel({ respond: benchReply });
    dataConverter = { externalStorage: payloadStorage({ directory: path.join(workDir, 'payloads') }) };
    connection = await Connection.connect({ address });
    agents = new AgentClient({ client: new Client({ connection, dataConverter }), taskQueue });
    worker = await startWorker();
  });
  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
    await model?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('answers 300 turns with 60 MB of content, with small histories, bounded worker memory and every byte in messages()', async () => {
    const conversation = await agents.startConversation({
      systemPrompt: 'You read large documents.',
      maxTurnsPerRun: TURNS_PER_RUN,
    });
    const turnGrowth: number[] = [];
    /** Turns whose history also holds a compaction (its activity and, first in a run, its patch marker). */
    const compactionTurnGrowth: number[] = [];
    const largestPayloads: number[] = [];
    const memory: { turn: number; usage: MemoryUsage }[] = [];
    let previous = { runId: '', bytes: 0, compactions: 0 };
    for (let turn = 1; turn <= TURNS; turn++) {
      const withTool = turn % TOOL_EVERY === 0;
      const result = await conversation.send(
        largeTurnText(turn, MESSAGE_BYTES, withTool ? TOOL_KILOBYTES : undefined),
      );
      expect(result, `turn ${turn}`).toMatchObject({ status: 'completed', reply: largeTurnAnswer(turn) });
      model.reset();

      const history = await storedHistory(conversation.handle);
      const runId = String(
        history.events?.[0]?.workflowExecutionStartedEventAttributes?.originalExecutionRunId ?? '',
      );
      const bytes = encodedBytes(history);
      const compactions = (history.events ?? []).filter(
        (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'compactContext',
      ).length;
      if (runId === previous.runId) {
        (compactions > previous.compactions ? compactionTurnGrowth : turnGrowth).push(bytes - previous.bytes);
      }
      previous = { runId, bytes, compactions };
      largestPayloads.push(largestPayload(history));

      if (turn === RESTART_AT) {
        await worker.stop();
        worker = await startWorker();
      }
      if (turn === REPLAY_AT) {
        // The latest run as the server stores it, references included: replay reads them from the store.
        await Worker.runReplayHistory(
          { workflowBundle: await workflowBundle(), dataConverter },
          history,
          conversation.id,
        );
      }
      if (turn === 100 || turn === 200 || turn === TURNS) memory.push({ turn, usage: await worker.memory() });
    }

    // Every turn's history stays small: no message or tool result is in it, only references.
    expect(Math.max(...turnGrowth)).toBeLessThan(12 * 1024);
    // The 1 MB window fills every few turns: its compactions summarise, and add one activity to their turn.
    expect(compactionTurnGrowth.length).toBeGreaterThan(10);
    expect(Math.max(...compactionTurnGrowth)).toBeLessThan(16 * 1024);
    expect(Math.max(...largestPayloads)).toBeLessThan(DEFAULT_PAYLOAD_THRESHOLD_BYTES);

    const messages = await conversation.messages();
    const userMessages = messages.filter((message) => message.role === 'user');
    const toolResults = messages.filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(userMessages).toHaveLength(TURNS);
    userMessages.forEach((message, index) => {
      const turn = index + 1;
      const expected = largeTurnText(
        turn,
        MESSAGE_BYTES,
        turn % TOOL_EVERY === 0 ? TOOL_KILOBYTES : undefined,
      );
      if (message.content !== expected) throw new Error(`user message of turn ${turn} differs`);
    });
    expect(toolResults).toHaveLength(TURNS / TOOL_EVERY);
    toolResults.forEach((message, index) => {
      const expected = largeResultText(largeResultTag((index + 1) * TOOL_EVERY), TOOL_KILOBYTES);
      if (message.content[0]?.text !== expected) throw new Error(`tool result ${index + 1} differs`);
    });
    const contentBytes = JSON.stringify(messages).length;
    expect(contentBytes).toBeGreaterThan(50 * 1024 * 1024);

    // The worker holds what it needs, not the conversation: memory at turn 300 is about what it was
    // at turn 200, though 20 MB more content went through it.
    const [, atTwoHundred, atEnd] = memory.map((sample) => sample.usage);
    console.log(
      `large conversation: ${(contentBytes / 1e6).toFixed(1)} MB of content; worker ${memory
        .map(
          (sample) =>
            `turn ${sample.turn}: rss ${(sample.usage.rss / 1e6).toFixed(0)} MB, heap ${(sample.usage.heapUsed / 1e6).toFixed(0)} MB`,
        )
        .join('; ')}; largest turn growth ${Math.max(...turnGrowth)} bytes`,
    );
    expect((atEnd?.heapUsed ?? 0) - (atTwoHundred?.heapUsed ?? 0)).toBeLessThan(48 * 1024 * 1024);
  }, 400_000);
});
