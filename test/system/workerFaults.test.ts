import { describe, expect, it } from 'vitest';
import type { PendingCallback } from '../../src/contract/types/callbacks.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { scriptAgents, systemPromptOf } from '../support/agentScript.ts';
import { useCrashScene } from '../support/workerProcess.ts';

const PARENT = 'You delegate.';
/** The system prompt of markerWorker.ts's `helper` sub-agent. */
const HELPER = 'You help.';

/**
 * Two faults the other crash tests leave out: a worker SIGKILLed while it holds a workflow task (its
 * work on the task never reaches the server), and one SIGKILLed while a callback tool's call waits
 * for its client. Each test prints how long recovery took; nothing asserts on it.
 */
describe('a worker killed', () => {
  const scene = useCrashScene('faults');
  const startWorker = (name: string, env?: Record<string, string>) =>
    scene.startWorker(name, env ? { env } : {});
  const startConversation = (id: string, systemPrompt: string) =>
    scene.startConversation(id, { systemPrompt });

  it('while it holds a workflow task: the task runs again elsewhere, and nothing completed is repeated', async () => {
    const conversation = await startConversation('kill-in-workflow-task', PARENT);
    scriptAgents(scene.model, {
      [PARENT]: (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_help', name: 'helper', arguments: { task: 'step' } }],
            }
          : { kind: 'text', text: 'The helper is done.' },
      [HELPER]: (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ id: 'call_step', name: 'step', arguments: {} }] }
          : { kind: 'text', text: 'Stepped.' },
    });
    await scene.bench.release();
    // It kills itself in the workflow task that acts on the model's reply (starts the sub-agent),
    // after the workflow code ran and before the task's completion is sent.
    const first = await startWorker('first', { KILL_ON_TOOL_START: 'helper' });
    const reply = conversation.send('get help');
    await expect.poll(() => first.process.signalCode, { timeout: 30_000 }).toBe('SIGKILL');
    const killed = Date.now();
    await startWorker('second');
    const restarted = Date.now();

    expect(await reply).toMatchObject({ status: 'completed', reply: 'The helper is done.' });
    const ended = Date.now();
    console.log(
      `recovery, workflow task: turn ended ${ended - killed} ms after the kill, ${ended - restarted} ms after the second worker was ready`,
    );
    // The parent's model call whose reply the lost task held was not made again.
    const prompts = scene.model.requests.map(systemPromptOf);
    expect(prompts.filter((prompt) => prompt === PARENT)).toHaveLength(2);
    expect(prompts.filter((prompt) => prompt === HELPER)).toHaveLength(2);
    // The sub-agent started once and its tool ran once, on the second worker.
    expect(await scene.bench.markers()).toEqual(['call_step.1.second.json']);
    const history = (await conversation.handle.fetchHistory()).events ?? [];
    expect(history.filter((event) => event.startChildWorkflowExecutionInitiatedEventAttributes)).toHaveLength(
      1,
    );
    // The Web UI shows the lost task: it timed out and ran again.
    expect(history.some((event) => event.workflowTaskTimedOutEventAttributes)).toBe(true);
    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect((messages[2] as ToolResultMessage).content[0]?.text).toBe('Stepped.');
  });

  it("while a callback tool waits for its client: the client's answer reaches the turn once", async () => {
    const conversation = await startConversation('kill-in-callback', 'Ask the client.');
    scene.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_ask', name: 'askClient', arguments: { question: 'ok?' } }],
      },
      { kind: 'text', text: 'The client said yes.' },
    );
    const first = await startWorker('first');
    const asked: PendingCallback[] = [];
    const errors: Error[] = [];
    let answer: (() => void) | undefined;
    const answering = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const controller = new AbortController();
    const served = conversation.serveCallbacks(
      {
        askClient: async (_args, call) => {
          asked.push(call);
          // The person takes a while to answer; the worker dies meanwhile.
          await answering;
          return { text: 'yes' };
        },
      },
      { signal: controller.signal, onError: (error) => errors.push(error), reconnect: {} },
    );
    const reply = conversation.send('ask');
    await expect.poll(() => asked.length, { timeout: 30_000 }).toBe(1);

    await first.kill();
    const killed = Date.now();
    // Answered while no worker runs: it waits in Temporal until one does.
    answer?.();
    await startWorker('second');
    const restarted = Date.now();

    expect(await reply).toMatchObject({ status: 'completed', reply: 'The client said yes.' });
    const ended = Date.now();
    console.log(
      `recovery, callback: turn ended ${ended - killed} ms after the kill, ${ended - restarted} ms after the second worker was ready`,
    );
    controller.abort();
    await served;
    expect(errors).toEqual([]);
    expect(asked).toHaveLength(1);
    expect(scene.model.requestCount).toBe(2);
    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(messages[2]).toMatchObject({ toolCallId: 'call_ask', isError: false, content: [{ text: 'yes' }] });
    expect((await conversation.status()).pendingCallbacks).toEqual([]);
  });
});
