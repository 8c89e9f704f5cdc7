import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { recentPollerTimes, TASK_QUEUE_TYPE_WORKFLOW } from '../../src/infrastructure/taskQueuePollers.ts';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { type LocalCluster, startLocalCluster } from './localCluster.ts';
import { workflowShard } from './shardOwnership.ts';
import type { TemporalNode } from './temporalNode.ts';

/** Per tool and job: how often the tool started and how often it finished. */
const runs = new Map<string, { started: number; finished: number }>();
const record = (key: string, field: 'started' | 'finished') => {
  const entry = runs.get(key) ?? { started: 0, finished: 0 };
  entry[field] += 1;
  runs.set(key, entry);
};

/** Slow calls wait for this gate, so that a node can be killed while they run. */
let openGate: () => void = () => {};
let gate: Promise<void> = Promise.resolve();
const closeGate = () => {
  gate = new Promise((resolve) => {
    openGate = resolve;
  });
};

const tool = (name: string, wait: () => Promise<void>): AgentTool => ({
  name,
  label: name,
  description: `The ${name} step of a job`,
  inputSchema: { type: 'object', properties: { job: { type: 'string' } }, required: ['job'] },
  parallelToolExecute: true,
  async execute(_toolCallId, args) {
    const key = `${name}:${(args as { job: string }).job}`;
    record(key, 'started');
    await wait();
    record(key, 'finished');
    return textResult(`${key} done`);
  },
});

/** `job X` gets a quick and a slow call in parallel; tool results get `finished X`. */
function jobReply(request: RecordedRequest): ScriptedReply {
  const messages = request.body.messages;
  const job = /^job (\S+)$/.exec(String(messages.find((message) => message.role === 'user')?.content))?.[1];
  if (messages.at(-1)?.role !== 'user') return { kind: 'text', text: `finished ${job}` };
  return {
    kind: 'toolCalls',
    toolCalls: [
      { name: 'quick', arguments: { job } },
      { name: 'slow', arguments: { job } },
    ],
  };
}

/** Conversations started until one lives on a shard of the node about to die; more than enough. */
const MAX_CONVERSATION_STARTS = 60;

/**
 * A real Temporal cluster: two `server start` nodes (every service each, 4 history shards) on one
 * PostgreSQL, behind a TCP proxy that the worker and the client use. Nodes are SIGKILLed mid-turn,
 * each while it owns history shards and at least one of the turns' conversations lives on one of them.
 */
describe('a two-node Temporal cluster losing a node mid-turn', () => {
  let cluster: LocalCluster;
  let agent: TestAgent;
  const takeovers: string[] = [];

  beforeAll(async () => {
    cluster = await startLocalCluster();
    agent = await startTestAgent({
      address: cluster.address,
      tools: [tool('quick', async () => {}), tool('slow', () => gate)],
      modelTimeoutMs: 10_000,
    });
    agent.model.respond(jobReply);
  }, 20 * 60_000);
  afterAll(async () => {
    openGate();
    await agent?.close();
    await cluster?.close();
    if (takeovers.length > 0) console.log(`shard takeover after SIGKILL:\n${takeovers.join('\n')}`);
  });

  /**
   * Three conversations, at least one of them on one of `shards`. A workflow id hashes to its shard,
   * so conversations are started until one lands there; the ones left over stay idle.
   */
  async function conversationsOn(shards: number[]): Promise<{ chosen: Conversation[]; onShards: number }> {
    // After the previous test's node came back, the queue lists the worker's pollers again only once
    // it re-polls the node that owns the queue; until then a start is refused with NoWorkerError.
    await expect
      .poll(
        async () =>
          (
            await recentPollerTimes(
              agent.client.client.workflowService,
              'default',
              agent.taskQueue,
              TASK_QUEUE_TYPE_WORKFLOW,
            )
          ).length,
        { timeout: 60_000 },
      )
      .toBeGreaterThan(0);
    const on: Conversation[] = [];
    const off: Conversation[] = [];
    for (let started = 0; on.length === 0 || on.length + off.length < 3; started += 1) {
      if (started === MAX_CONVERSATION_STARTS)
        throw new Error(`none of ${started} conversations landed on shards [${shards.join(', ')}]`);
      const conversation = await agent.client.startConversation({ systemPrompt: 'Run the job.' });
      const shard = await workflowShard(cluster.address, 'default', conversation.id);
      (shards.includes(shard) ? on : off).push(conversation);
    }
    const chosen = [...on, ...off].slice(0, 3);
    return { chosen, onShards: Math.min(on.length, 3) };
  }

  /** Three conversations each run a turn; `victim` is killed while every slow call is running. */
  async function turnsSurvive(victim: TemporalNode, survivor: TemporalNode, label: string) {
    const victimShards = (await cluster.waitForShardSplit()).get(victim) ?? [];
    const { chosen: conversations, onShards } = await conversationsOn(victimShards);
    closeGate();
    const jobs = [1, 2, 3].map((n) => `${label}-${n}`);
    const turns = conversations.map((conversation, index) => conversation.send(`job ${jobs[index]}`));
    await expect
      .poll(() => jobs.every((job) => runs.get(`slow:${job}`)?.started === 1), { timeout: 30_000 })
      .toBe(true);
    const quickFinished = jobs.every((job) => runs.get(`quick:${job}`)?.finished === 1);
    // Still an owner when it dies: the survivor has shards to take over.
    const shardsAtKill = await victim.ownedShards();
    expect(shardsAtKill).not.toEqual([]);
    const killedAt = await victim.kill();
    const takeover = cluster.waitForAllShards(survivor);
    // Awaited below, after the turns; a rejection meanwhile is not unhandled.
    takeover.catch(() => undefined);
    openGate();

    const results = await Promise.all(turns);
    const turnsDoneAt = Date.now();
    expect(results.map((result) => [result.status, result.reply])).toEqual(
      jobs.map((job) => ['completed', `finished ${job}`]),
    );
    for (const job of jobs) {
      // Every call ran to the end exactly once: none was repeated after the node died.
      expect(runs.get(`quick:${job}`)).toEqual({ started: 1, finished: 1 });
      expect(runs.get(`slow:${job}`)).toEqual({ started: 1, finished: 1 });
    }
    expect(quickFinished).toBe(true);
    for (const [index, conversation] of conversations.entries()) {
      const messages = await conversation.messages();
      expect(messages.map((message) => message.role)).toEqual([
        'user',
        'assistant',
        'toolResult',
        'toolResult',
        'assistant',
      ]);
      expect(messages[3]).toMatchObject({ content: [{ text: `slow:${jobs[index]} done` }] });
    }

    const tookOverAt = await takeover;
    takeovers.push(
      `  ${victim.name} killed owning shards [${shardsAtKill.join(', ')}] (${onShards} of the 3 conversations): ` +
        `${survivor.name} owned all ${cluster.numHistoryShards} after ${tookOverAt - killedAt} ms, ` +
        `the turns completed after ${turnsDoneAt - killedAt} ms`,
    );
  }

  it("completes every turn, repeating no tool call, when a node that is not the client's frontend dies", async () => {
    const [front, other] = cluster.nodes as [TemporalNode, TemporalNode];
    await turnsSurvive(other, front, 'first');
  });

  it("completes every turn, repeating no tool call, when the client's frontend dies behind the proxy", async () => {
    const [front, other] = cluster.nodes as [TemporalNode, TemporalNode];
    await cluster.restart(other);
    await turnsSurvive(front, other, 'second');
  });
});
