import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';

function yiem(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args],
      { timeout: 100_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** A model that answers only once `open()` is called: a turn that runs while the test looks at it. */
function gatedReplies(agent: TestAgent): { open(): void } {
  let open: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  agent.model.respond(async (request) => {
    await gate;
    const last = request.body.messages.at(-1) as { content?: unknown } | undefined;
    return { kind: 'text', text: `Answer to ${String(last?.content)}` };
  });
  return {
    open() {
      open();
      gate = Promise.resolve();
    },
  };
}

describe('detached turns: yiem send --detach, then yiem turns list, watch and collect', () => {
  let agent: TestAgent;
  let connection: string[];
  beforeAll(async () => {
    agent = await startTestAgent();
    connection = ['--address', agent.address, '--task-queue', agent.taskQueue];
  });
  afterAll(async () => agent?.close());

  it('send --detach returns while the turn runs; turns list shows it waiting, then collect prints its reply', async () => {
    const model = gatedReplies(agent);
    const id = `detached-${randomUUID()}`;
    const sent = await yiem(['send', '--detach', '--id', id, 'What is the plan?', ...connection]);
    expect(sent.code).toBe(0);
    const turnId = new RegExp(`^conversation ${id} turn (\\S+)\\n$`).exec(sent.stdout)?.[1] ?? '';
    expect(turnId).not.toBe('');
    expect(sent.stderr).toContain(`yiem turns collect ${id} ${turnId}`);

    const waiting = await yiem(['turns', 'list', id, ...connection]);
    expect(waiting.code).toBe(0);
    expect(waiting.stdout).toMatch(
      new RegExp(`^${turnId}  \\S+  "What is the plan\\?"  → waiting for its turn\\n$`),
    );

    model.open();
    const collected = await yiem(['turns', 'collect', id, turnId, ...connection]);
    expect(collected).toMatchObject({ code: 0, stdout: 'agent> Answer to What is the plan?\n' });
    const answered = await yiem(['turns', 'list', id, ...connection]);
    expect(answered.stdout).toContain(`${turnId}  `);
    expect(answered.stdout).toContain('→ completed: Answer to What is the plan?');
    await agent.client.getConversation(id).end();
  });

  it('turns watch follows a detached turn to its end and prints its result', async () => {
    const model = gatedReplies(agent);
    const id = `watched-${randomUUID()}`;
    const sent = await yiem(['send', '--detach', '--id', id, 'Think it over', ...connection]);
    const turnId = /turn (\S+)/.exec(sent.stdout)?.[1] ?? '';
    const watch = spawn(process.execPath, [
      ...YIEM_FROM_SOURCES,
      'turns',
      'watch',
      id,
      turnId,
      ...connection,
    ]);
    let stdout = '';
    watch.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => watch.on('exit', resolve));
    model.open();
    expect(await exited).toBe(0);
    expect(stdout).toMatch(/agent> Answer to Think it over\n$/);
    await agent.client.getConversation(id).end();
  });

  it('a detached message to a new conversation ends it after its turn, and its result is still collected', async () => {
    gatedReplies(agent).open();
    const sent = await yiem(['send', '--detach', 'Once only', ...connection]);
    const [, id = '', turnId = ''] = /^conversation (\S+) turn (\S+)\n$/.exec(sent.stdout) ?? [];
    const conversation = agent.client.getConversation(id);
    await expect(conversation.handle.result()).resolves.toMatchObject({ turns: 1 });
    await expect(conversation.collect(turnId)).resolves.toMatchObject({
      status: 'completed',
      reply: 'Answer to Once only',
    });
    expect(await conversation.turns()).toMatchObject([
      { turnId, text: 'Once only', state: 'answered', result: { reply: 'Answer to Once only' } },
    ]);
  });

  it('collects and lists a turn of an earlier run, after the conversation continued as new', async () => {
    gatedReplies(agent).open();
    const conversation = await agent.client.startConversation({ systemPrompt: 'Hi.', maxTurnsPerRun: 1 });
    const first = await conversation.sendDetached('First');
    await expect(conversation.collect(first.turnId)).resolves.toMatchObject({ reply: 'Answer to First' });
    const second = await conversation.sendDetached('Second');
    await expect(conversation.collect(second.turnId)).resolves.toMatchObject({ reply: 'Answer to Second' });
    const turns = await conversation.turns();
    expect(turns).toMatchObject([
      { turnId: first.turnId, text: 'First', state: 'answered' },
      { turnId: second.turnId, text: 'Second', state: 'answered' },
    ]);
    expect(turns[0]?.runId).not.toBe(turns[1]?.runId);
    await expect(conversation.collect(first.turnId)).resolves.toMatchObject({ reply: 'Answer to First' });
    await conversation.end();
  });

  it('collect names a turn id the conversation does not have', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Hi.' });
    const collected = await yiem(['turns', 'collect', conversation.id, 'turn-nope', ...connection]);
    expect(collected.code).toBe(1);
    expect(collected.stderr).toContain(
      `Conversation ${conversation.id} has no message with turn id turn-nope`,
    );
    await conversation.end();
  });
});
