import { execFile } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { startTerminal, type Terminal } from '../support/tmux.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** A tool the test holds open, so the terminal can be read while it runs. */
let releaseForecast: () => void = () => {};
const forecast: AgentTool = {
  name: 'forecast',
  label: 'Forecast',
  description: 'Fetches a forecast',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
  parallelToolExecute: true,
  execute: async (_id, args, signal, onPartialResult) => {
    onPartialResult({ status: 'fetching radar', percent: 40 });
    await new Promise<void>((resolve) => {
      releaseForecast = resolve;
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
    return textResult(`Sunny in ${String(args.city)}`);
  },
};

const transferMoney: AgentTool = {
  name: 'transferMoney',
  label: 'Transfer Money',
  description: 'Sends money',
  inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } } },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: (_id, args) => textResult(`Sent ${String(args.amount)} to ${String(args.to)}`),
};

describe('yiem chat in a terminal', () => {
  let agent: TestAgent;
  let terminal: Terminal | undefined;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [forecast, transferMoney],
      hooks: {
        beforeToolCall: ({ toolName, args }) =>
          toolName === 'forecast' && args.city === 'Mordor'
            ? { block: true, reason: 'no forecasts for Mordor' }
            : undefined,
      },
    });
  });
  afterEach(async () => {
    await terminal?.close();
    terminal = undefined;
  });
  afterAll(async () => agent?.close());

  const chat = (...extra: string[]) =>
    startTerminal(
      [
        'node',
        ...YIEM_FROM_SOURCES,
        'chat',
        '--address',
        agent.address,
        '--task-queue',
        agent.taskQueue,
        ...extra,
      ],
      { cwd: ROOT, env: { YIEM_UI_URL: 'http://ui.test' } },
    );
  const lastPrompt = (screen: string) => screen.trimEnd().split('\n').at(-1) === 'you>';
  /** Another terminal's `yiem` command against the same conversations. */
  const yiem = async (...args: string[]) =>
    (await run(process.execPath, [...YIEM_FROM_SOURCES, ...args, '--address', agent.address])).stdout;

  it('streams the reply, shows tool progress on a spinner line, asks for approval, and has /tools, /history, /ui', async () => {
    terminal = await chat();
    const welcome = await terminal.waitFor(lastPrompt, 'the prompt');
    const id = /Conversation (\S+)/.exec(welcome)?.[1] ?? '';
    expect(welcome).toContain(`Web UI: http://ui.test/namespaces/default/workflows/${id}`);

    agent.model.enqueue(
      {
        kind: 'toolCalls',
        text: 'Checking the radar.',
        toolCalls: [{ name: 'forecast', arguments: { city: 'Tokyo' } }],
      },
      { kind: 'text', text: 'Tokyo will be sunny all day.', deltaDelayMs: 40 },
    );
    await terminal.type('Weather in Tokyo?');
    await terminal.keys('Enter');
    const running = await terminal.waitFor('fetching radar', 'the tool progress');
    expect(running).toContain('agent> Checking the radar.');
    // The running tool is one line that a spinner keeps redrawing: its summary and latest progress.
    expect(running).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] forecast\(city: "Tokyo"\) · status: fetching radar, percent: 40/);
    releaseForecast();
    const answered = await terminal.waitFor(
      (screen) => screen.includes('agent> Tokyo will be sunny all day.') && lastPrompt(screen),
      'the final reply',
    );
    expect(answered).toContain('  ✓ forecast: Sunny in Tokyo');
    expect(answered).not.toContain('fetching radar');
    const lines = answered.split('\n');
    const order = [
      'you> Weather in Tokyo?',
      'agent> Checking the radar.',
      '✓ forecast',
      'agent> Tokyo will be sunny',
    ].map((text) => lines.findIndex((line) => line.includes(text)));
    expect(order.every((index, i) => index >= 0 && (i === 0 || index > (order[i - 1] ?? 0)))).toBe(true);

    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_pay', name: 'transferMoney', arguments: { to: 'Ana', amount: 100 } }],
      },
      { kind: 'text', text: 'Done: Ana has her 100.' },
    );
    await terminal.type('Pay Ana 100');
    await terminal.keys('Enter');
    const asking = await terminal.waitFor('Approve transferMoney? [y/n]', 'the approval question');
    expect(asking).toContain(
      '? transferMoney({"to":"Ana","amount":100}) needs your approval: Transfer Money requires approval',
    );
    await terminal.type('y');
    await terminal.keys('Enter');
    const paid = await terminal.waitFor(
      (screen) => screen.includes('agent> Done: Ana has her 100.') && lastPrompt(screen),
      'the reply after approval',
    );
    expect(paid).toContain('  ✓ transferMoney: Sent 100 to Ana');

    await terminal.type('/tools');
    await terminal.keys('Enter');
    await terminal.waitFor('transferMoney (Transfer Money): Sends money', 'the tool list');
    await terminal.type('/ui');
    await terminal.keys('Enter');
    await terminal.waitFor(
      (screen) => screen.split(`http://ui.test/namespaces/default/workflows/${id}`).length > 2,
      'the Web UI link',
    );

    // Leave, then come back to the same conversation with --id: its history is there.
    await terminal.type('/exit');
    await terminal.keys('Enter');
    await terminal.waitForExit();
    await terminal.close();
    terminal = await chat('--id', id);
    const resumed = await terminal.waitFor(lastPrompt, 'the prompt of the resumed chat');
    // The earlier turns are on screen before anything is typed.
    expect(resumed).toContain('you> Pay Ana 100');
    expect(resumed).toContain('agent> Done: Ana has her 100.');
    await terminal.type('/history');
    await terminal.keys('Enter');
    const history = await terminal.waitFor('agent> Done: Ana has her 100.', 'the transcript');
    expect(history).toContain(`Conversation ${id}`);
    expect(history).toContain('you> Weather in Tokyo?');
    expect(history).toContain('  ✓ transferMoney: Sent 100 to Ana');
  }, 120_000);

  it('asks about an approval that was already waiting when the chat resumes with --id, then shows the reply', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'You pay people.' });
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_rent', name: 'transferMoney', arguments: { to: 'Bo', amount: 50 } }],
      },
      { kind: 'text', text: 'Paid: Bo has his 50.' },
    );
    // No chat is attached when the approval is requested: a person closed it, or another client sent.
    const sent = conversation.send('Pay Bo 50');
    await expect
      .poll(async () => (await conversation.status()).pendingApprovals.length, { timeout: 15_000 })
      .toBe(1);

    terminal = await chat('--id', conversation.id);
    const asking = await terminal.waitFor('Approve transferMoney? [y/n]', 'the approval question');
    expect(asking).toContain(`Conversation ${conversation.id}`);
    expect(asking).toContain(
      '? transferMoney({"to":"Bo","amount":50}) needs your approval: Transfer Money requires approval',
    );
    await terminal.type('y');
    await terminal.keys('Enter');
    const paid = await terminal.waitFor(
      (screen) => screen.includes('agent> Paid: Bo has his 50.') && lastPrompt(screen),
      'the reply after approval',
    );
    expect(paid).toContain('  approved transferMoney');
    expect(paid).toContain('  ✓ transferMoney: Sent 50 to Bo');
    expect(paid.split('Approve transferMoney?')).toHaveLength(2);
    expect(await sent).toMatchObject({ status: 'completed', reply: 'Paid: Bo has his 50.' });
    expect((await conversation.status()).pendingApprovals).toEqual([]);
  }, 120_000);

  it('while idle at you>, asks about a turn started elsewhere that needs approval and takes the next line as the answer', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'You pay people.' });
    terminal = await chat('--id', conversation.id);
    await terminal.waitFor(lastPrompt, 'the idle prompt');
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_gift', name: 'transferMoney', arguments: { to: 'Cy', amount: 20 } }],
      },
      { kind: 'text', text: 'Sent: Cy has his 20.' },
      { kind: 'text', text: 'You are welcome.' },
    );
    // Another client starts the turn while the person is typing at the idle prompt.
    await terminal.type('Thanks');
    const sent = conversation.send('Pay Cy 20');
    const asking = await terminal.waitFor(
      (screen) => screen.trimEnd().split('\n').at(-1) === 'Approve transferMoney? [y/n]',
      'the approval question',
    );
    expect(asking).toContain(
      '? transferMoney({"to":"Cy","amount":20}) needs your approval: Transfer Money requires approval',
    );
    await terminal.type('y');
    await terminal.keys('Enter');
    const paid = await terminal.waitFor(
      (screen) => screen.includes('agent> Sent: Cy has his 20.') && screen.trimEnd().endsWith('you> Thanks'),
      'the reply of the turn started elsewhere',
    );
    expect(paid).toContain('  approved transferMoney');
    expect(paid).toContain('  ✓ transferMoney: Sent 20 to Cy');
    expect(await sent).toMatchObject({ status: 'completed', reply: 'Sent: Cy has his 20.' });
    // What was being typed when the question came is back at the prompt, and still a message.
    expect(paid.trimEnd().split('\n').at(-1)).toBe('you> Thanks');
    await terminal.keys('Enter');
    await terminal.waitFor('agent> You are welcome.', 'the reply to the typed message');
    const said = (await conversation.messages()).filter((message) => message.role === 'user');
    expect(said.map((message) => message.content)).toEqual(['Pay Cy 20', 'Thanks']);
  }, 120_000);

  it('cancels on Ctrl-C a turn another client started, and stays open', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    terminal = await chat('--id', conversation.id);
    await terminal.waitFor(lastPrompt, 'the idle prompt');
    agent.model.enqueue({
      kind: 'toolCalls',
      toolCalls: [{ name: 'forecast', arguments: { city: 'Bergen' } }],
    });
    const sent = conversation.send('Weather in Bergen?');
    await terminal.waitFor('fetching radar', 'the tool progress of the turn started elsewhere');
    await terminal.keys('C-c');
    expect(await sent).toMatchObject({ status: 'cancelled' });
    const cancelled = await terminal.waitFor(
      (screen) => screen.includes('Cancelling the turn… (Ctrl-C again exits)') && lastPrompt(screen),
      'the prompt after the cancelled turn',
    );
    expect(cancelled).not.toContain('Bye.');
    await terminal.keys('C-c');
    expect(await terminal.waitForExit()).toContain('Bye.');
  }, 120_000);

  it('cancels the running turn on Ctrl-C, and exits on a second Ctrl-C', async () => {
    terminal = await chat();
    await terminal.waitFor(lastPrompt, 'the prompt');
    agent.model.enqueue({
      kind: 'toolCalls',
      toolCalls: [{ name: 'forecast', arguments: { city: 'Oslo' } }],
    });
    await terminal.type('Weather in Oslo?');
    await terminal.keys('Enter');
    await terminal.waitFor('fetching radar', 'the tool progress');
    await terminal.keys('C-c');
    const cancelled = await terminal.waitFor(
      (screen) => screen.includes('agent! The turn was cancelled.') && lastPrompt(screen),
      'the cancelled turn',
    );
    expect(cancelled).toContain('Cancelling the turn… (Ctrl-C again exits)');
    const id = /Conversation (\S+)/.exec(cancelled)?.[1] ?? '';
    expect((await agent.client.getConversation(id).status()).lastTurn?.status).toBe('cancelled');
    await terminal.keys('C-c');
    expect(await terminal.waitForExit()).toContain('Bye.');
  }, 120_000);

  it('closes the approval question when yiem approve answers it, says so, and takes the next line as a message', async () => {
    terminal = await chat();
    const welcome = await terminal.waitFor(lastPrompt, 'the prompt');
    const id = /Conversation (\S+)/.exec(welcome)?.[1] ?? '';
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_far', name: 'transferMoney', arguments: { to: 'Di', amount: 7 } }],
      },
      { kind: 'text', text: 'Di has her 7.' },
      { kind: 'text', text: 'Glad to help.' },
    );
    await terminal.type('Pay Di 7');
    await terminal.keys('Enter');
    const asking = await terminal.waitFor('Approve transferMoney? [y/n]', 'the approval question');
    expect(asking).toContain(
      'needs your approval: Transfer Money requires approval [approval tool-1-call_far]',
    );

    const status = await yiem('status', id);
    expect(status).toContain(`approval tool-1-call_far: transferMoney({"to":"Di","amount":7})`);
    expect(status).toContain(`yiem approve ${id} tool-1-call_far`);
    expect(await yiem('status')).toContain(`${id}  running`);
    expect(await yiem('approve', id, 'tool-1-call_far')).toContain('Approved tool-1-call_far.');

    const paid = await terminal.waitFor(
      (screen) => screen.includes('agent> Di has her 7.') && lastPrompt(screen),
      'the reply after the approval elsewhere',
    );
    expect(paid).toContain(
      `  approved transferMoney by yiem approve (${os.userInfo().username}@${os.hostname()})`,
    );
    expect(paid).toContain('  ✓ transferMoney: Sent 7 to Di');
    expect(paid).not.toContain('denied transferMoney');
    await terminal.type('thanks');
    await terminal.keys('Enter');
    await terminal.waitFor('agent> Glad to help.', 'the reply to the next line');
    const said = await agent.client.getConversation(id).messages();
    expect(said.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      'Pay Di 7',
      'thanks',
    ]);
  }, 120_000);

  it('shows the calls answered before they ran: an unknown tool, arguments that are not JSON, a blocked call', async () => {
    terminal = await chat();
    await terminal.waitFor(lastPrompt, 'the prompt');
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_a', name: 'teleport', arguments: {} },
          { id: 'call_b', name: 'forecast', arguments: '{"city": "Par' },
          { id: 'call_c', name: 'forecast', arguments: { city: 'Mordor' } },
        ],
      },
      { kind: 'text', text: 'None of that worked.' },
    );
    await terminal.type('Try things');
    await terminal.keys('Enter');
    const screen = await terminal.waitFor(
      (text) => text.includes('agent> None of that worked.') && lastPrompt(text),
      'the reply',
    );
    expect(screen).toContain('  ✗ teleport: Tool "teleport" not found');
    expect(screen).toMatch(/ {2}✗ forecast: .*JSON/);
    expect(screen).toContain('  ✗ forecast: Tool call "forecast" was blocked: no forecasts for Mordor');
    const lines = screen.split('\n');
    expect(lines.findIndex((line) => line.includes('✗ teleport'))).toBeLessThan(
      lines.findIndex((line) => line.includes('agent> None of that worked.')),
    );
  }, 120_000);

  it('sends /followup and /interrupt while the agent works, and shows where each message entered', async () => {
    terminal = await chat();
    await terminal.waitFor(lastPrompt, 'the prompt');
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ name: 'forecast', arguments: { city: 'Oslo' } }] },
      { kind: 'text', text: 'Paris is sunny.' },
      { kind: 'text', text: 'Tomorrow too.' },
    );
    await terminal.type('Weather in Oslo?');
    await terminal.keys('Enter');
    await terminal.waitFor('fetching radar', 'the tool progress');
    await terminal.type('/followup and tomorrow?');
    await terminal.keys('Enter');
    await terminal.waitFor('✉ follow-up queued: and tomorrow?', 'the follow-up queued');
    await terminal.type('/interrupt forget Oslo, Paris please');
    await terminal.keys('Enter');
    const screen = await terminal.waitFor(
      (text) => text.includes('agent> Tomorrow too.') && lastPrompt(text),
      'the follow-up answered',
    );
    releaseForecast();
    expect(screen).toContain('✉ interrupt queued: forget Oslo, Paris please');
    expect(screen).toContain('↳ the interrupt joined turn 1 after model call 1, 1 tool call cut short');
    expect(screen).toContain('↳ the follow-up opened turn 2');
    const lines = screen.split('\n');
    const order = [
      '↳ the interrupt joined',
      'agent> Paris is sunny.',
      '↳ the follow-up opened',
      'agent> Tomorrow too.',
    ].map((text) => lines.findIndex((line) => line.includes(text)));
    expect(order.every((index, i) => index >= 0 && (i === 0 || index > (order[i - 1] ?? 0)))).toBe(true);
  }, 120_000);
});
