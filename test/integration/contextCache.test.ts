import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelContextReader } from '../../activities/modelContext.ts';
import { StoredMessages } from '../../activities/storedMessages.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

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
