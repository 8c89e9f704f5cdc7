import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationRefusedError } from '../../src/client/errors.ts';
import { type AgentWorker, createAgentWorker } from '../../src/worker/worker.ts';
import { quietBundle, startTestAgent, type TestAgent } from '../support/agentHarness.ts';

/** The conversation workflow with an unguarded timer: every recorded conversation fails its tasks on it. */
const CHANGED_WORKFLOWS = fileURLToPath(new URL('../support/workflows/extraTimer.ts', import.meta.url));

/**
 * A conversation whose workflow task fails (here: a worker with changed workflow code, the
 * nondeterminism a careless deploy makes). The server refuses Updates meanwhile; the client sends
 * them again for a while, takes them once a good worker serves the task, and otherwise says why.
 */
describe('a message to a conversation whose workflow task is failing', () => {
  let agent: TestAgent;
  let broken: { worker: AgentWorker; running: Promise<void> } | undefined;
  beforeAll(async () => {
    agent = await startTestAgent();
  });
  afterAll(async () => {
    broken?.worker.shutdown();
    await broken?.running;
    await agent?.close();
  });

  it('is refused naming the failing task after a while, then taken once a good worker runs, nothing lost', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Hello.' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('hello')).toMatchObject({ status: 'completed' });

    await agent.stopWorker();
    const worker = await createAgentWorker({
      connection: { address: agent.address, taskQueue: agent.taskQueue },
      tools: { builtinTools: false },
      // The same model as the good worker's, so that its check of the queue's workers finds no other.
      models: {
        model: { baseURL: agent.model.baseURL, apiKey: 'test-key-never-in-history', model: 'scripted' },
      },
      worker: { workflowBundle: await quietBundle(CHANGED_WORKFLOWS) },
    });
    broken = { worker, running: worker.run() };
    await conversation.post('while it fails');
    await expect
      .poll(async () =>
        (await conversation.handle.fetchHistory()).events?.some((e) => e.workflowTaskFailedEventAttributes),
      )
      .toBe(true);

    const refused = await conversation.send('refused').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConversationRefusedError);
    expect(String((refused as Error).message)).toMatch(
      new RegExp(
        `^Conversation ${conversation.id} refused .*its workflow task kept failing for 15 s.*worker's log`,
      ),
    );

    // The posted message and this one may share a turn or take one each: each answered alike.
    agent.model.respond(() => ({ kind: 'text', text: 'Back.' }));
    const taken = conversation.send('taken');
    // The good worker joins before the bad one leaves: the queue is never without a worker, which
    // the send would otherwise name (NoWorkerError) instead of waiting.
    await agent.startWorker();
    broken.worker.shutdown();
    await broken.running;
    broken = undefined;
    expect(await taken).toMatchObject({ status: 'completed', reply: 'Back.' });
    const said = (await conversation.messages()).filter((message) => message.role === 'user');
    expect(said.map((message) => message.content)).toEqual(['hello', 'while it fails', 'taken']);
  });
});
