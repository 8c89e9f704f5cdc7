import { describe, expect, it } from 'vitest';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { scriptAgents, systemPromptOf } from '../support/agentScript.ts';
import { useCrashScene } from '../support/workerProcess.ts';

/** Workers are processes killed with SIGKILL (see workerCrash.test.ts); the sub-agent is markerWorker's `helper`. */
describe("a worker killed during a sub-agent's turn", () => {
  const scene = useCrashScene('subagent-crash');
  const { startWorker } = scene;
  const startConversation = () => scene.startConversation('subagent-crash', { systemPrompt: 'Coordinate' });

  it('finishes the child on another worker: the tool runs again as attempt 2, no model call is repeated', async () => {
    scriptAgents(scene.model, {
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
    await expect.poll(scene.bench.markers, { timeout: 30_000 }).toEqual(['call_step.1.first.json']);

    await first.kill();
    await scene.bench.release();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'The helper is done.' });
    expect(await scene.bench.markers()).toEqual(['call_step.1.first.json', 'call_step.2.second.json']);
    // Parent: the call that asked for the helper, the one after its reply. Child: the same two.
    expect(scene.model.requests.map(systemPromptOf)).toEqual([
      'Coordinate',
      'You help.',
      'You help.',
      'Coordinate',
    ]);

    const childId = `${conversation.id}.helper.turn-1.call_help`;
    const child = scene.client.getConversation(childId);
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
    scriptAgents(scene.model, {
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
      .poll(() => scene.model.requests.map(systemPromptOf), { timeout: 30_000 })
      .toEqual(['Coordinate', 'You help.']);

    await first.kill();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'The helper thought.' });
    expect(scene.model.requests.map(systemPromptOf)).toEqual([
      'Coordinate',
      'You help.',
      'You help.',
      'Coordinate',
    ]);
    expect(scene.model.requests[2]?.body.messages).toEqual(scene.model.requests[1]?.body.messages);
    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect((messages[2] as ToolResultMessage).content[0]?.text).toBe('Thought it through.');
  });
});
