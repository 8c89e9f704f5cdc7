import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import type { ToolResultMessage } from '../../src/contract/types.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { scriptAgents, systemPromptOf } from '../support/agentScript.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

/** Workers are processes killed with SIGKILL (see workerCrash.test.ts); the sub-agent is markerWorker's `helper`. */
describe("a worker killed during a sub-agent's turn", () => {
  const address = inject('temporalAddress');
  let model: ScriptedModel;
  let client: AgentClient;
  let bench: CrashBench;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    model = await startScriptedModel();
    client = new AgentClient({ address });
  });
  afterAll(async () => {
    await client?.close();
    await model?.close();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    await bench?.remove();
    model.reset();
  });

  let taskQueue: string;
  const startWorker = async (name: string): Promise<WorkerProcess> => {
    const worker = await startWorkerProcess({ name, bench, address, taskQueue, modelBaseURL: model.baseURL });
    workers.push(worker);
    return worker;
  };
  const startConversation = async () => {
    taskQueue = `subagent-crash-${randomUUID()}`;
    bench = await createCrashBench();
    const scoped = new AgentClient({ client: client.client, taskQueue });
    return scoped.startConversation({
      id: `subagent-crash-${randomUUID()}`,
      systemPrompt: 'Coordinate',
      modelPolicy: { heartbeatTimeout: '2 seconds', retry: { initialInterval: '100 milliseconds' } },
    });
  };

  it('finishes the child on another worker: the tool runs again as attempt 2, no model call is repeated', async () => {
    scriptAgents(model, {
      Coordinate: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_help', name: 'helper', arguments: { task: 'one step' } }],
            }
          : { kind: 'text', text: 'The helper is done.' },
      'You help.': (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ id: 'call_step', name: 'step', arguments: {} }] }
          : { kind: 'text', text: 'Step taken.' },
    });
    const conversation = await startConversation();
    const first = await startWorker('first');
    const reply = conversation.send('get help');
    await expect.poll(bench.markers, { timeout: 30_000 }).toEqual(['call_step.1.first.json']);

    await first.kill();
    await bench.release();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'The helper is done.' });
    expect(await bench.markers()).toEqual(['call_step.1.first.json', 'call_step.2.second.json']);
    // Parent: the call that asked for the helper, the one after its reply. Child: the same two.
    expect(model.requests.map(systemPromptOf)).toEqual([
      'Coordinate',
      'You help.',
      'You help.',
      'Coordinate',
    ]);

    const childId = `${conversation.id}.helper.turn-1.call_help`;
    const child = client.getConversation(childId);
    const childMessages = await child.messages();
    expect(childMessages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'assistant',
    ]);
    expect((childMessages[2] as ToolResultMessage).content[0]?.text).toBe(
      'step call_step done by second on attempt 2',
    );
    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect((messages[2] as ToolResultMessage).content[0]?.text).toBe('Step taken.');
    // One child workflow, started once.
    const history = (await conversation.handle.fetchHistory()).events ?? [];
    expect(history.filter((event) => event.startChildWorkflowExecutionInitiatedEventAttributes)).toHaveLength(
      1,
    );
  });

  it("retries the child's model call that died with its worker, with the same context, and repeats nothing else", async () => {
    let helperCalls = 0;
    scriptAgents(model, {
      Coordinate: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_help', name: 'helper', arguments: { task: 'think' } }],
            }
          : { kind: 'text', text: 'The helper thought.' },
      'You help.': () => {
        helperCalls += 1;
        return helperCalls === 1
          ? { kind: 'text', text: 'never delivered', delayMs: 60_000 }
          : { kind: 'text', text: 'Thought it through.' };
      },
    });
    const conversation = await startConversation();
    const first = await startWorker('first');
    const reply = conversation.send('think hard');
    await expect
      .poll(() => model.requests.map(systemPromptOf), { timeout: 30_000 })
      .toEqual(['Coordinate', 'You help.']);

    await first.kill();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'The helper thought.' });
    expect(model.requests.map(systemPromptOf)).toEqual([
      'Coordinate',
      'You help.',
      'You help.',
      'Coordinate',
    ]);
    expect(model.requests[2]?.body.messages).toEqual(model.requests[1]?.body.messages);
    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect((messages[2] as ToolResultMessage).content[0]?.text).toBe('Thought it through.');
  });
});
