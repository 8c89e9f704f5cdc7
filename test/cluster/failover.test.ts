import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types.ts';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { type LocalCluster, startLocalCluster } from './localCluster.ts';
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

/**
 * A real Temporal cluster: two `server start` nodes (every service each, 4 history shards) on one
 * PostgreSQL, behind a TCP proxy that the worker and the client use. Nodes are SIGKILLed mid-turn.
 */
describe('a two-node Temporal cluster losing a node mid-turn', () => {
  let cluster: LocalCluster;
  let agent: TestAgent;
  const takeovers: string[] = [];

  beforeAll(async () => {
    cluster = await startLocalCluster();
    // The second node takes its share of the shards once it has joined the ring.
    await cluster.waitForShards(cluster.nodes[1] as TemporalNode);
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

  /** Three conversations each run a turn; `victim` is killed while every slow call is running. */
  async function turnsSurvive(victim: TemporalNode, survivor: TemporalNode, label: string) {
    closeGate();
    const jobs = [1, 2, 3].map((n) => `${label}-${n}`);
    const conversations = await Promise.all(
      jobs.map(() => agent.client.startConversation({ systemPrompt: 'Run the job.' })),
    );
    const turns = conversations.map((conversation, index) => conversation.send(`job ${jobs[index]}`));
    await expect
      .poll(() => jobs.every((job) => runs.get(`slow:${job}`)?.started === 1), { timeout: 30_000 })
      .toBe(true);
    const quickFinished = jobs.every((job) => runs.get(`quick:${job}`)?.finished === 1);
    const killedAt = await victim.kill();
    openGate();

    const results = await Promise.all(turns);
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

    const taken = (await survivor.shardAcquisitions()).filter((acquired) => acquired.at >= killedAt);
    expect(taken.length).toBeGreaterThan(0);
    const slowest = Math.max(...taken.map((acquired) => acquired.at - killedAt));
    takeovers.push(
      `  ${victim.name} killed: ${survivor.name} took over ${taken.length} shard(s), the last after ${slowest} ms`,
    );
  }

  it("completes every turn, repeating no tool call, when a node that is not the client's frontend dies", async () => {
    const [front, other] = cluster.nodes as [TemporalNode, TemporalNode];
    await turnsSurvive(other, front, 'first');
  });

  it("completes every turn, repeating no tool call, when the client's frontend dies behind the proxy", async () => {
    const [front, other] = cluster.nodes as [TemporalNode, TemporalNode];
    const restartedAt = Date.now();
    await cluster.restart(other);
    await cluster.waitForShards(other, restartedAt);
    await turnsSurvive(front, other, 'second');
  });
});
