import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentTool } from '../../src/contract/agents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import type { ScriptedReply } from '../../src/testing/index.ts';
import { getTool as readUserFile } from '../../tools/readUserFile.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { scriptAgents } from '../support/agentScript.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { startTerminal, type Terminal } from '../support/tmux.ts';

const PARENT = 'You chat.';

const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a fact up',
  inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
  parallelToolExecute: true,
  execute: (_id, args) => textResult(`${String(args.topic)} is an old drink`),
};
const transferMoney: AgentTool = {
  name: 'transferMoney',
  label: 'Transfer Money',
  description: 'Sends money',
  inputSchema: { type: 'object', properties: { amount: { type: 'number' } } },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: (_id, args) => textResult(`sent ${String(args.amount)}`),
};
const banker = agentTool({
  name: 'banker',
  description: 'Moves money',
  systemPrompt: 'You bank.',
  tools: ['transferMoney'],
});
const researcher = agentTool({
  name: 'researcher',
  description: 'Looks facts up',
  systemPrompt: 'You research.',
  tools: ['lookup'],
});

describe('yiem chat with sub-agents and the readUserFile callback tool', () => {
  let agent: TestAgent;
  let terminal: Terminal | undefined;
  let folder: string;
  /** The parent's next reply when it has not seen a tool result yet. */
  let ask: ScriptedReply;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [lookup, researcher, transferMoney, banker, readUserFile()] });
    folder = await mkdtemp(path.join(os.tmpdir(), 'yiem-chat-'));
    await writeFile(path.join(folder, 'notes.txt'), 'remember the milk');
    await writeFile(path.join(folder, '.env'), 'TOKEN=secret');
    scriptAgents(agent.model, {
      [PARENT]: (request) => {
        const last = request.body.messages.at(-1);
        return last?.role === 'tool' ? { kind: 'text', text: `Got: ${String(last.content)}` } : ask;
      },
      'You research.': (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ name: 'lookup', arguments: { topic: 'tea' } }] }
          : { kind: 'text', text: 'Tea is old.' },
      'You bank.': (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ name: 'transferMoney', arguments: { amount: 5 } }] }
          : { kind: 'text', text: 'Paid 5.' },
    });
  });
  afterEach(async () => {
    await terminal?.close();
    terminal = undefined;
  });
  afterAll(async () => {
    await agent?.close();
    await rm(folder, { recursive: true, force: true });
  });

  const chat = () =>
    startTerminal(
      [
        'node',
        ...YIEM_FROM_SOURCES,
        'chat',
        '--address',
        agent.address,
        '--task-queue',
        agent.taskQueue,
        '--system',
        PARENT,
      ],
      { cwd: folder, env: { YIEM_UI_URL: 'http://ui.test' } },
    );
  const lastPrompt = (screen: string) => screen.trimEnd().split('\n').at(-1) === 'you>';
  const say = async (text: string) => {
    await terminal?.type(text);
    await terminal?.keys('Enter');
  };

  it("shows what a sub-agent does, with its name, and the parent's reply", async () => {
    terminal = await chat();
    await terminal.waitFor(lastPrompt, 'the prompt');
    ask = { kind: 'toolCalls', toolCalls: [{ name: 'researcher', arguments: { task: 'tea facts' } }] };
    await say('research tea');
    // Live while the child runs; from its transcript when it finished before the chat could follow it.
    const screen = await terminal.waitFor(
      (text) =>
        text.includes('[researcher] ✓ lookup: tea is an old drink') &&
        text.includes('agent> Got: Tea is old.'),
      'the sub-agent and the reply',
    );
    expect(screen).toContain('✓ researcher: Tea is old.');
  });

  it("asks about a sub-agent's call that needs approval, saying which agent asks", async () => {
    terminal = await chat();
    await terminal.waitFor(lastPrompt, 'the prompt');
    ask = { kind: 'toolCalls', toolCalls: [{ name: 'banker', arguments: { task: 'pay 5' } }] };
    await say('pay five');
    // The question ends as the last line, as typed: a line printed while it is open goes above it and
    // the question is drawn again (two writes to the terminal, so the screen is read once both landed).
    const questionLast = (text: string) =>
      text.trimEnd().split('\n').at(-1) === 'Approve transferMoney? [y/n]';
    await terminal.waitFor(
      (text) =>
        text.includes('? transferMoney({"amount":5}) (asked by sub-agent banker) needs your approval') &&
        text.includes('[banker] ? transferMoney waits for approval') &&
        questionLast(text),
      'the approval question and the sub-agent line, the question last',
    );
    await say('y');
    const screen = await terminal.waitFor(
      (text) => text.includes('agent> Got: Paid 5.') && lastPrompt(text),
      'the reply',
    );
    expect(screen).toContain('approved transferMoney');
    expect(screen).toContain('✓ banker: Paid 5.');
  });

  it('reads a file on the machine the chat runs on, and asks first about one that looks secret', async () => {
    terminal = await chat();
    await terminal.waitFor(lastPrompt, 'the prompt');
    ask = { kind: 'toolCalls', toolCalls: [{ name: 'readUserFile', arguments: { path: 'notes.txt' } }] };
    await say('read my notes');
    await terminal.waitFor(
      (text) => text.includes('agent> Got: remember the milk') && lastPrompt(text),
      'the notes',
    );

    ask = { kind: 'toolCalls', toolCalls: [{ name: 'readUserFile', arguments: { path: '.env' } }] };
    await say('read my .env');
    await terminal.waitFor(
      `The agent wants to read ${path.join(folder, '.env')}. Allow? [y/n]`,
      'the question',
    );
    await say('n');
    const screen = await terminal.waitFor(
      (text) => text.includes('agent> Got: The user did not allow reading .env.') && lastPrompt(text),
      'the refusal',
    );
    expect(screen).not.toContain('TOKEN=secret');
  });
});
