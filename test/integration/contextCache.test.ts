import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelContextReader } from '../../activities/modelContext.ts';
import { StoredMessages } from '../../activities/storedMessages.ts';
import { readActions } from '../../bench/actions.ts';
import type { Conversation } from '../../src/client/client.ts';
import { MAX_CONTEXT_TAIL_BYTES } from '../../src/contract/limits.ts';
import type { DevServer } from '../../src/infrastructure/server/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { type MeteredAgent, startMeteredAgent } from '../support/meteredAgent.ts';

/** The real client, recording the index every `modelContext` query starts from. */
function recordingQueries(client: Client, fromIndices: number[]): () => Promise<Client> {
  const workflow = new Proxy(client.workflow, {
    get(target, property, receiver) {
      if (property !== 'getHandle') return Reflect.get(target, property, receiver);
      return (...args: Parameters<Client['workflow']['getHandle']>) => {
        const handle = target.getHandle(...args);
        return new Proxy(handle, {
          get(handleTarget, handleProperty, handleReceiver) {
            if (handleProperty !== 'query') return Reflect.get(handleTarget, handleProperty, handleReceiver);
            return (query: never, from: number, ...rest: never[]) => {
              fromIndices.push(from);
              return handleTarget.query(query, from, ...rest);
            };
          },
        });
      };
    },
  });
  const recording = new Proxy(client, {
    get: (target, property, receiver) =>
      property === 'workflow' ? workflow : Reflect.get(target, property, receiver),
  });
  return async () => recording;
}

/** How often the dev server's metrics (tally, Prometheus) publish their counters: about once a second. */
const METRICS_FLUSH_MS = 1_000;
describe("the worker's context cache", () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent();
  });
  afterAll(async () => agent?.close());

  it('survives continue-as-new: the next run is asked only for the messages the cache lacks', async () => {
    agent.model.respond(() => ({ kind: 'text', text: 'noted' }));
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Cache me.',
      maxTurnsPerRun: 1,
    });
    const { firstExecutionRunId } = conversation.handle as typeof conversation.handle & {
      firstExecutionRunId: string;
    };
    await conversation.send('one');
    await conversation.send('two');
    const fromIndices: number[] = [];
    const getClient = recordingQueries(agent.client.client, fromIndices);
    const reader = new ModelContextReader(getClient, new StoredMessages(getClient));
    const read = async (messageCount: number) => {
      const { runId } = await conversation.handle.describe();
      expect(runId).not.toBe(firstExecutionRunId);
      return reader.read({
        workflowId: conversation.id,
        runId,
        transcriptId: firstExecutionRunId,
        messageCount,
        storeIndices: [],
        maxContextBytes: 1_000_000,
      });
    };

    expect((await read(4)).messages.map((message) => message.content)).toEqual([
      'one',
      'noted',
      'two',
      'noted',
    ]);
    await conversation.send('three');
    expect((await read(6)).messages.map((message) => message.content)).toEqual([
      'one',
      'noted',
      'two',
      'noted',
      'three',
      'noted',
    ]);
    expect(fromIndices).toEqual([0, 4]);
  });
});

describe('model calls on a warm worker', () => {
  let server: DevServer;
  let agent: TestAgent;
  let metered: MeteredAgent | undefined;
  beforeAll(async () => {
    metered = await startMeteredAgent();
    ({ server, agent } = metered);
  });
  afterAll(async () => metered?.close());

  /** The QueryWorkflow Actions the server counted (the frontend's gRPC calls). */
  const queries = async (): Promise<number> =>
    (await readActions(server.metricsUrl as string)).grpc_QueryWorkflow ?? 0;

  /**
   * The QueryWorkflow Actions `step` cost, read once one more query of our own (a `status()`) has
   * been counted: the server's counter has then caught up with the step.
   */
  async function queriesDuring(conversation: Conversation, step: () => Promise<unknown>): Promise<number> {
    const before = await queries();
    await step();
    const afterStep = await queries();
    await conversation.status();
    await expect.poll(queries).toBeGreaterThan(afterStep);
    // The counter moves in the server's metric flushes, so the one that showed a change may hold the
    // step's query and not yet ours: two flushes later both are in.
    await sleep(2 * METRICS_FLUSH_MS);
    return (await queries()) - before - 1;
  }

  const sentTexts = (): unknown[] =>
    (agent.model.lastRequest()?.body.messages ?? []).map((message) =>
      'content' in message && typeof message.content === 'string' ? message.content : message.role,
    );

  it('costs no context query after the first turn, and a cold worker still reads the whole context', async () => {
    agent.model.respond((request) =>
      request.body.messages.at(-1)?.role === 'user' &&
      String(request.body.messages.at(-1)?.content).startsWith('use echo')
        ? { kind: 'toolCalls', toolCalls: [{ id: 'call_1', name: 'echo', arguments: { text: 'ping' } }] }
        : { kind: 'text', text: `reply ${agent.model.requestCount}` },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    expect(await queriesDuring(conversation, () => conversation.send('one'))).toBe(1);

    const warmTurns = async () => {
      await conversation.send('two');
      await conversation.send('use echo');
      await conversation.send('three');
    };
    expect(await queriesDuring(conversation, warmTurns)).toBe(0);
    expect(sentTexts()).toEqual([
      'Be brief.',
      'one',
      'reply 1',
      'two',
      'reply 2',
      'use echo',
      'assistant',
      'echo: ping',
      'reply 4',
      'three',
    ]);

    // A message too large to hand to the worker's cache is read by query, whole.
    const large = 'x'.repeat(MAX_CONTEXT_TAIL_BYTES + 1);
    expect(await queriesDuring(conversation, () => conversation.send(large))).toBe(1);
    expect(sentTexts().at(-1)).toBe(large);

    await agent.restartWorker();
    expect(await queriesDuring(conversation, () => conversation.send('four'))).toBeGreaterThan(0);
    expect(sentTexts()).toEqual([
      'Be brief.',
      'one',
      'reply 1',
      'two',
      'reply 2',
      'use echo',
      'assistant',
      'echo: ping',
      'reply 4',
      'three',
      'reply 5',
      large,
      'reply 6',
      'four',
    ]);
  });
});
