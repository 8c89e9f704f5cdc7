import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, ensureTemporalCli, startDevServer } from '../../src/infrastructure/server/index.ts';
import { getTool as readUserFile } from '../../tools/readUserFile.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { startTerminal, type Terminal } from '../support/tmux.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REPLY = 'Answered through the outage.';

/**
 * A Temporal server of the test's own (the shared one must survive), stopped under a chat and
 * started again on the same port and SQLite file.
 */
describe('yiem chat through a Temporal outage', () => {
  let dataDir: string;
  let server: DevServer;
  let agent: TestAgent;
  let terminal: Terminal | undefined;
  const startServer = async (port: number): Promise<DevServer> =>
    startDevServer({ dataDir, cliPath: await ensureTemporalCli(), port, headless: true });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-chat-outage-'));
    server = await startServer(0);
    // Long enough for a reply that pauses before it ends (the second test).
    agent = await startTestAgent({
      address: server.address,
      tools: [readUserFile()],
      modelTimeoutMs: 60_000,
    });
  });
  afterAll(async () => {
    await terminal?.close();
    await agent?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const lastPrompt = (screen: string) => screen.trimEnd().split('\n').at(-1) === 'you>';
  /** `yiem chat` on the agent's queue, in a terminal of its own; resolves with its first screen. */
  const openChat = async () => {
    await terminal?.close();
    terminal = await startTerminal(
      ['node', ...YIEM_FROM_SOURCES, 'chat', '--address', server.address, '--task-queue', agent.taskQueue],
      { cwd: ROOT, env: { YIEM_UI_URL: 'http://ui.test' } },
    );
    return { terminal, welcome: await terminal.waitFor(lastPrompt, 'the prompt') };
  };

  it('holds the message typed while Temporal is down, sends it once when it is back, and keeps following', async () => {
    const address = server.address;
    const port = Number(address.split(':').at(-1));
    const { terminal: chat, welcome } = await openChat();
    const id = /Conversation (\S+)/.exec(welcome)?.[1] ?? '';
    agent.model.enqueue({ kind: 'text', text: 'Before the outage.' });
    await chat.type('hello');
    await chat.keys('Enter');
    await chat.waitFor((screen) => screen.includes('agent> Before the outage.') && lastPrompt(screen));

    server.kill();
    await server.stop();
    // The live view notices by itself, once the client's own retries give up.
    await chat.waitFor(`Temporal at ${address} is unreachable; retrying…`, 'the live view noticing');
    await chat.type('Are you there?');
    await chat.keys('Enter');
    await chat.waitFor(
      `Temporal at ${address} is unreachable; retrying (your message was not sent yet`,
      'the outage notice',
    );

    agent.model.enqueue({ kind: 'text', text: 'Back after the outage.' });
    server = await startServer(port);
    const back = await chat.waitFor(
      (screen) => screen.includes('agent> Back after the outage.') && lastPrompt(screen),
      'the reply to the held message',
    );
    expect(back).toContain(`Temporal at ${address} answers again.`);
    expect(back).not.toContain('live updates stopped');

    // The live view follows again: a turn another client starts shows as it happens.
    agent.model.enqueue({ kind: 'text', text: 'Seen live after the restart.' });
    const conversation = agent.client.getConversation(id);
    expect(await conversation.send('from elsewhere')).toMatchObject({ status: 'completed' });
    await chat.waitFor('agent> Seen live after the restart.', 'the turn started elsewhere');

    // The chat serves its callback tool again: readUserFile runs here, on the chat's machine.
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ name: 'readUserFile', arguments: { path: 'package.json' } }] },
      { kind: 'text', text: 'And a plain reply.' },
    );
    await chat.type('one more');
    await chat.keys('Enter');
    const served = await chat.waitFor(
      (screen) => screen.includes('agent> And a plain reply.') && lastPrompt(screen),
      'the reply after the callback tool',
    );
    expect(served).toContain('✓ readUserFile');
    expect(served).not.toContain('callback tools stopped');
    const said = (await conversation.messages()).filter((message) => message.role === 'user');
    expect(said.map((message) => message.content)).toEqual([
      'hello',
      'Are you there?',
      'from elsewhere',
      'one more',
    ]);
  }, 180_000);

  it('says a message accepted before the outage was accepted, and prints its reply once (or marks a retry)', async () => {
    const address = server.address;
    const port = Number(address.split(':').at(-1));
    const { terminal: chat } = await openChat();
    agent.model.reset();
    // The reply streams whole at once and its call then runs on: the chat shows the text before the
    // server goes, and the call's result reaches Temporal only after it is back (or its attempt is
    // lost and a second one answers again).
    agent.model.respond(() => ({ kind: 'text', text: REPLY, finishDelayMs: 20_000 }));
    await chat.type('slow question');
    await chat.keys('Enter');
    await chat.waitFor(`agent> ${REPLY}`, 'the reply streamed before the outage');
    server.kill();
    await server.stop();
    await chat.waitFor(
      `Temporal at ${address} is unreachable; retrying (your message was accepted: its reply shows once Temporal answers)`,
      'the outage notice for an accepted message',
    );
    server = await startServer(port);
    const back = await chat.waitFor(
      (screen) => screen.includes(`Temporal at ${address} answers again.`) && lastPrompt(screen),
      'the prompt after the reply to the accepted message',
    );
    expect(back).not.toContain('not sent yet');
    // Printed once; or, when the attempt that streamed it was lost, again after a note saying so.
    const gaps = back.slice(back.indexOf('slow question')).split(REPLY).slice(1, -1);
    expect(gaps.length).toBeLessThanOrEqual(1);
    for (const gap of gaps) expect(gap).toContain('↻ the model call failed; retrying (attempt 2)');
  }, 180_000);
});
