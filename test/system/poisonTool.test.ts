import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { TurnResult } from '../../src/contract/types/turns.ts';
import { createToolProject, type ToolProject } from '../support/toolProject.ts';
import { type CrashScene, useCrashScene } from '../support/workerProcess.ts';

/** A tool that SIGKILLs the worker running it, on every attempt (an out-of-memory kill, a native crash). */
const POISON_TOOL = `
export function getTool() {
  return {
    name: 'poison',
    label: 'Poison',
    description: 'Kills its worker',
    inputSchema: { type: 'object', properties: {} },
    parallelToolExecute: true,
    policy: { heartbeatTimeout: '2 seconds', retry: { maximumAttempts: 3, initialInterval: '100 milliseconds' } },
    async execute() {
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => {});
    },
  };
}
`;

/**
 * Sends "try it", for which the model calls `tool` once, then answers "The tool is broken." (and
 * "Still here." to the next message), and starts a worker each time the last one dies, until the
 * turn ends: the turn and how many workers died.
 */
async function tryUntilGivenUp(
  scene: CrashScene,
  conversation: Conversation,
  tool: string,
  project: ToolProject,
): Promise<{ turn: TurnResult; deaths: number }> {
  scene.model.enqueue(
    { kind: 'toolCalls', toolCalls: [{ id: `call_${tool}`, name: tool, arguments: {} }] },
    { kind: 'text', text: 'The tool is broken.' },
    { kind: 'text', text: 'Still here.' },
  );
  let settled = false;
  const reply = conversation.send('try it').finally(() => {
    settled = true;
  });
  // Each worker dies in the call's next attempt; the next one takes over, until the call is given up.
  let deaths = 0;
  while (!settled && deaths < 6) {
    const worker = await scene.startWorker(`w${deaths}`, {
      env: { TOOLS_DIR: project.toolsDir },
      cwd: project.dir,
    });
    const died = once(worker.process, 'exit').then(() => true);
    if (await Promise.race([died, reply.then(() => false)])) deaths++;
  }
  return { turn: await reply, deaths };
}

/**
 * A tool call that kills its worker on every attempt: after its attempts the call fails for good
 * with a result the model and the user can read, and the conversation answers the next message.
 */
describe('a tool that kills its worker on every attempt', () => {
  const scene = useCrashScene('poison');
  let project: ToolProject | undefined;
  afterEach(async () => {
    await project?.remove();
  });

  it('fails for good after its attempts, saying the worker died, and the conversation goes on', async () => {
    project = await createToolProject({ 'poison.js': POISON_TOOL });
    const conversation = await scene.startConversation('poison', { systemPrompt: 'Try.' });
    const { turn, deaths } = await tryUntilGivenUp(scene, conversation, 'poison', project);
    expect(turn).toMatchObject({ status: 'completed', reply: 'The tool is broken.' });
    expect(deaths).toBe(3);
    const result = (await conversation.messages())[2] as ToolResultMessage;
    expect(result).toMatchObject({ isError: true });
    expect(result.content[0]?.text).toBe(
      'Tool "poison" failed for good: the worker running it died or stopped answering (no heartbeat for 2 seconds) on its last attempt, and all 3 attempts are used up. It is not tried again; a call that crashes its worker each time needs fixing.',
    );
    expect(scene.model.requests[1]?.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: result.content[0]?.text,
    });
    // The conversation is usable: the last worker is alive, and answers the next message.
    expect(await conversation.send('and now?')).toMatchObject({ status: 'completed', reply: 'Still here.' });
  });
});

/** {@link POISON_TOOL} with attempts to spare: its policy gives up after 3 worker deaths, not 10 attempts. */
const POISON_MANY_TOOL = POISON_TOOL.replace("name: 'poison'", "name: 'poisonMany'").replace(
  'retry: { maximumAttempts: 3,',
  'maxWorkerDeaths: 3, retry: { maximumAttempts: 10,',
);

/** A tool that throws on its first three attempts and answers on the fourth, on a worker that stays up. */
const FLAKY_TOOL = `
let calls = 0;
export function getTool() {
  return {
    name: 'flaky',
    label: 'Flaky',
    description: 'Fails three times, then works',
    inputSchema: { type: 'object', properties: {} },
    policy: { heartbeatTimeout: '2 seconds', maxWorkerDeaths: 1, retry: { maximumAttempts: 6, initialInterval: '100 milliseconds' } },
    async execute() {
      calls++;
      if (calls < 4) throw new Error('not yet');
      return { content: [{ type: 'text', text: 'worked on call ' + calls }] };
    },
  };
}
`;

/**
 * A tool whose retry policy allows more attempts than worker deaths: the call is given up after its
 * worker died `maxWorkerDeaths` times, while its ordinary failures (a thrown error) never count.
 */
describe('the worker deaths a tool call may cost', () => {
  const scene = useCrashScene('poison-count');
  let project: ToolProject | undefined;
  afterEach(async () => {
    await project?.remove();
  });

  it('fails the call for good after its worker died maxWorkerDeaths times, with 7 attempts left', async () => {
    project = await createToolProject({ 'poisonMany.js': POISON_MANY_TOOL });
    const conversation = await scene.startConversation('poison-count', { systemPrompt: 'Try.' });
    const { turn, deaths } = await tryUntilGivenUp(scene, conversation, 'poisonMany', project);
    expect(turn).toMatchObject({ status: 'completed', reply: 'The tool is broken.' });
    // The fourth attempt's worker lives: it gives the call up instead of running the tool.
    expect(deaths).toBe(3);
    const result = (await conversation.messages())[2] as ToolResultMessage;
    // The turn's result and the conversation's status name the call given up.
    expect(turn.givenUp).toEqual([result.content[0]?.text]);
    expect((await conversation.status()).lastTurn?.givenUp).toEqual(turn.givenUp);
    expect(result).toMatchObject({ isError: true, details: { workerDeaths: 3, attempt: 4 } });
    expect(result.content[0]?.text).toBe(
      'Tool "poisonMany" failed: the worker died 3 times running this tool (killed, out of memory or crashed), so it is not tried again; a call that crashes its worker each time needs fixing.',
    );
    expect(scene.model.requests[1]?.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: result.content[0]?.text,
    });
    expect(await conversation.send('and now?')).toMatchObject({ status: 'completed', reply: 'Still here.' });
  });

  it('does not count thrown errors: a tool that may lose one worker still gets its attempts', async () => {
    project = await createToolProject({ 'flaky.js': FLAKY_TOOL });
    const conversation = await scene.startConversation('poison-count-flaky', { systemPrompt: 'Try.' });
    scene.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_flaky', name: 'flaky', arguments: {} }] },
      { kind: 'text', text: 'It worked.' },
    );
    await scene.startWorker('only', { env: { TOOLS_DIR: project.toolsDir }, cwd: project.dir });
    const turn = await conversation.send('try it');
    expect(turn).toMatchObject({ status: 'completed', reply: 'It worked.' });
    expect(turn.givenUp).toBeUndefined();
    const result = (await conversation.messages())[2] as ToolResultMessage;
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'worked on call 4' }] });
  });
});

/**
 * A model call whose worker dies on every attempt (here killed by the test as each attempt's request
 * reaches the model): the turn fails for good after its attempts, saying so, and the conversation
 * answers the next message.
 */
describe('a model call whose worker dies on every attempt', () => {
  const scene = useCrashScene('poison-model');

  it('fails the turn for good after its 5 attempts, saying the worker died, and the conversation goes on', async () => {
    const conversation = await scene.startConversation('poison-model', { systemPrompt: 'Answer.' });
    for (let attempt = 1; attempt <= 5; attempt++) scene.model.enqueue({ kind: 'hang', ms: 120_000 });
    scene.model.enqueue({ kind: 'text', text: 'Still here.' });
    const reply = conversation.send('answer me');
    for (let attempt = 1; attempt <= 5; attempt++) {
      const worker = await scene.startWorker(`w${attempt}`);
      await expect.poll(() => scene.model.requestCount, { timeout: 60_000 }).toBe(attempt);
      await worker.kill();
    }
    await scene.startWorker('last');
    const result = await reply;
    expect(result).toMatchObject({ status: 'failed' });
    expect(result.error).toBe(
      'The model call failed for good: the worker running it died or stopped answering (no heartbeat for 2 seconds) on its last attempt, and all 5 attempts are used up. It is not tried again; a call that crashes its worker each time needs fixing.',
    );
    expect((await conversation.status()).lastTurn).toMatchObject({ status: 'failed', error: result.error });
    expect(await conversation.send('and now?')).toMatchObject({ status: 'completed', reply: 'Still here.' });
  });
});

/**
 * A model call with 10 attempts on workers that give a call up after 2 worker deaths
 * (`worker.maxWorkerDeaths`): the third attempt fails the turn for good, saying so, without calling
 * the model again.
 */
describe('the worker deaths a model call may cost', () => {
  const scene = useCrashScene('poison-model-count');

  it('fails the turn after maxWorkerDeaths deaths, with attempts left, as status().lastTurn says', async () => {
    const conversation = await scene.startConversation('poison-model-count', {
      systemPrompt: 'Answer.',
      modelAttempts: 10,
    });
    scene.model.enqueue({ kind: 'hang', ms: 120_000 }, { kind: 'hang', ms: 120_000 });
    scene.model.enqueue({ kind: 'text', text: 'Still here.' });
    const env = { MAX_WORKER_DEATHS: '2' };
    const reply = conversation.send('answer me');
    for (let attempt = 1; attempt <= 2; attempt++) {
      const worker = await scene.startWorker(`w${attempt}`, { env });
      await expect.poll(() => scene.model.requestCount, { timeout: 60_000 }).toBe(attempt);
      await worker.kill();
    }
    await scene.startWorker('last', { env });
    const result = await reply;
    expect(result).toMatchObject({
      status: 'failed',
      error:
        'The model call failed: the worker died 2 times running this model call (killed, out of memory or crashed), so it is not tried again; a call that crashes its worker each time needs fixing',
    });
    expect(scene.model.requestCount).toBe(2);
    expect((await conversation.status()).lastTurn).toMatchObject({ status: 'failed', error: result.error });
    expect(await conversation.send('and now?')).toMatchObject({ status: 'completed', reply: 'Still here.' });
  });
});
