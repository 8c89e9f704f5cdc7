import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, serveConsole } from '../../src/client/consoleServer.ts';
import { agentTool } from '../../src/contract/agents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import type { ScriptedReply } from '../../src/testing/scriptedModel.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

/** Debian's chromium; never a downloaded browser. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const BUILD_CONSOLE = fileURLToPath(new URL('../../scripts/buildConsole.mjs', import.meta.url));
/** Set to a folder (docs/images) to write docs/console.md's screenshots of the console there. */
const SCREENSHOTS = process.env.YIEM_CONSOLE_SCREENSHOTS;
const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));
/**
 * What each picture of docs/console.md shows, in its caption's words there; where the test takes the
 * picture, it checks that the page is in that state. The pictures themselves are not compared pixel
 * by pixel: they show a conversation id, a task queue and start times that differ on every run.
 */
const CAPTIONS = {
  'console-conversation.png':
    'A conversation whose turn waits for two transfers to be approved; a reason for denying the second is being typed',
  'console-list.png':
    "The conversation list: a conversation that waits for its sub-agent's approval, and the sub-agent's conversation, which asks for it",
};

/**
 * Takes the picture `name` of docs/images: into `SCREENSHOTS` when set (to regenerate it), else into
 * memory, to check that it has the committed picture's size (the scenario's viewport and layout).
 */
async function picture(page: Page, name: keyof typeof CAPTIONS): Promise<void> {
  if (SCREENSHOTS) {
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, name) });
    return;
  }
  const taken = await page.screenshot();
  const committed = await readFile(path.join(DOCS, 'images', name));
  // A PNG's width and height: big-endian, bytes 16 to 24 of its IHDR chunk.
  const size = (png: Buffer) => [png.readUInt32BE(16), png.readUInt32BE(20)];
  expect(size(taken), `docs/images/${name} against the scenario's picture`).toEqual(size(committed));
}
/** Links point here; the test's dev server runs headless, so nothing answers there. */
const WEB_UI = 'http://127.0.0.1:8233';
const WAIT = { timeout: 30_000 };

let slowStarted: () => void = () => {};

const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a city up',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
  parallelToolExecute: true,
  execute: (_id, args) => textResult(`${String(args.city)}: sunny`),
};

const slowLookup: AgentTool = {
  name: 'slowLookup',
  label: 'Slow lookup',
  description: 'Looks something up, slowly',
  inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
  parallelToolExecute: true,
  execute: async (_id, args, signal, onPartialResult) => {
    onPartialResult?.({ step: 'reading the archives' });
    // Runs until the turn is cancelled.
    const stopped = new Promise<never>((_resolve, reject) => {
      signal?.addEventListener('abort', () => reject(new Error(`stopped looking up ${String(args.topic)}`)), {
        once: true,
      });
    });
    slowStarted();
    return stopped;
  },
};

let heldStarted: () => void = () => {};
let releaseHeld: () => void = () => {};
/** Lets a model call a test holds answer; a test that fails leaves none held. */
let releaseModel: () => void = () => {};

/** Answers once the test releases it. */
const heldLookup: AgentTool = {
  name: 'heldLookup',
  label: 'Held lookup',
  description: 'Looks something up, as long as the test says',
  inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
  parallelToolExecute: true,
  execute: async (_id, args) => {
    const released = new Promise<void>((resolve) => {
      releaseHeld = resolve;
    });
    heldStarted();
    await released;
    return textResult(`${String(args.topic)}: found`);
  },
};

const transfer: AgentTool = {
  name: 'transfer',
  label: 'Transfer',
  description: 'Sends money',
  inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } } },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: (_id, args) => textResult(`sent ${String(args.amount)} to ${String(args.to)}`),
};

/** A sub-agent whose transfers wait for approval on its parent conversation. */
const cashier = agentTool({
  name: 'cashier',
  description: 'Pays people',
  systemPrompt: 'You pay people.',
  tools: ['transfer'],
});

async function say(page: Page, text: string): Promise<void> {
  await page.fill('#input', text);
  await page.click('#send');
}

/** Sends a message while a turn runs, as `delivery` says, and waits until the server has taken it. */
async function sendDuringTurn(page: Page, text: string, delivery: string): Promise<void> {
  await page.selectOption('#delivery', delivery);
  const taken = page.waitForResponse(
    (response) => response.url().endsWith('/messages') && response.request().method() === 'POST',
  );
  await say(page, text);
  expect((await taken).status()).toBe(200);
}

/** The user messages a recorded model request carries. */
function userTexts(request: { body: { messages: unknown[] } }): string[] {
  return (request.body.messages as { role: string; content: unknown }[])
    .filter((message) => message.role === 'user')
    .map((message) =>
      typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
    );
}

/** The list's row of a conversation, cell by cell (empty before it is listed). */
async function listed(page: Page, id: string) {
  const row = page.locator(`tr[data-id="${id}"]`);
  if ((await row.count()) === 0) return {};
  const cell = (name: string) => row.locator(`td.${name}`).textContent();
  return {
    status: await cell('status'),
    turns: await cell('turns'),
    waiting: await cell('waiting'),
    agent: await cell('agent'),
    cost: await cell('cost'),
  };
}

describe("docs/console.md's pictures", () => {
  it('have the captions whose state the scenario checks where it takes them', async () => {
    const page = await readFile(path.join(DOCS, 'console.md'), 'utf8');
    const captions = Object.fromEntries(
      [...page.matchAll(/!\[([^\]]*)\]\(images\/([^)]+)\)/g)].map((match) => [match[2], match[1]]),
    );
    expect(captions).toEqual(CAPTIONS);
  });
});

describe('the console in headless Chromium, against the dev server', () => {
  let agent: TestAgent;
  let assets: string;
  let console_: RunningConsole;
  let browser: Browser;

  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [lookup, slowLookup, heldLookup, transfer, cashier],
      prices: { scripted: { inputPerMillion: 3, outputPerMillion: 15 } },
    });
    assets = await mkdtemp(path.join(tmpdir(), 'yiem-console-'));
    await promisify(execFile)(process.execPath, [BUILD_CONSOLE, assets]);
    console_ = await serveConsole({
      client: agent.client,
      assetsDir: assets,
      webUiUrl: WEB_UI,
      newConversation: () => ({ systemPrompt: 'You help.', toolExecution: 'parallel' }),
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  });
  // A test that fails leaves none of its scripted replies to the next one.
  afterEach(() => {
    agent?.model.reset();
    agent?.model.respond(undefined);
    releaseModel();
  });
  afterAll(async () => {
    await browser?.close();
    await console_?.close();
    await agent?.close();
    if (assets) await rm(assets, { recursive: true, force: true });
  });

  it('chats with parallel tools, one call approved and one denied with a reason, the list following along', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        text: 'Checking both cities, then paying.',
        toolCalls: [
          { name: 'lookup', arguments: { city: 'Tokyo' } },
          { name: 'lookup', arguments: { city: 'Paris' } },
          { name: 'transfer', arguments: { to: 'alice', amount: 5 } },
          { name: 'transfer', arguments: { to: 'mallory', amount: 500 } },
        ],
      },
      { kind: 'text', text: 'Both sunny; alice has her 5, mallory gets nothing.' },
    );
    const id = `console-${randomUUID()}`;
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${console_.url}#/conversations/${id}`);
    await say(page, 'Weather in Tokyo and Paris, then pay alice 5 and mallory 500');

    const alice = page.locator('.tool[data-tool="transfer"]', { hasText: 'alice' });
    const mallory = page.locator('.tool[data-tool="transfer"]', { hasText: 'mallory' });
    await alice.locator('button.approve').waitFor(WAIT);
    await mallory.locator('button.deny').waitFor(WAIT);
    await expect
      .poll(() => listed(page, id), WAIT)
      .toMatchObject({
        status: 'awaitingApproval',
        turns: '1',
        waiting: 'approval',
        agent: agent.taskQueue,
      });
    await expect.poll(() => page.locator('#conversation-state').textContent(), WAIT).toBe('running');

    await mallory.locator('input.reason').fill('mallory is not a customer');
    // What the caption of the picture says: two transfers wait, a reason for the second is typed.
    expect(await page.locator('.tool[data-tool="transfer"] button.approve').count()).toBe(2);
    expect(await mallory.locator('input.reason').inputValue()).toBe('mallory is not a customer');
    await picture(page, 'console-conversation.png');
    await alice.locator('button.approve').click();
    await mallory.locator('button.deny').click();

    await page.locator('.text', { hasText: 'mallory gets nothing' }).waitFor(WAIT);
    const lookups = page.locator('.tool[data-tool="lookup"]');
    expect(await lookups.locator('.input').allTextContents()).toEqual([
      '{ "city": "Tokyo" }',
      '{ "city": "Paris" }',
    ]);
    expect(await lookups.locator('.output').allTextContents()).toEqual(['Tokyo: sunny', 'Paris: sunny']);
    expect(await alice.locator('.output').textContent()).toBe('sent 5 to alice');
    expect(await alice.getAttribute('data-state')).toBe('output-available');
    expect(await mallory.getAttribute('data-state')).toBe('output-denied');
    expect(await mallory.locator('.denied').textContent()).toBe('Denied: mallory is not a customer');
    const results = (await agent.client.getConversation(id).messages()).filter(
      (message) => message.role === 'toolResult',
    );
    expect(JSON.stringify(results)).toContain('mallory is not a customer');
    expect(JSON.stringify(results)).not.toContain('sent 500 to mallory');

    // Each call links to its activity in the Web UI's history, the conversation to its page there.
    await expect
      .poll(
        () =>
          lookups
            .locator('a.call-webui')
            .evaluateAll((links) => links.map((link) => link.getAttribute('href'))),
        WAIT,
      )
      .toEqual([
        expect.stringMatching(
          new RegExp(`^${WEB_UI}/namespaces/default/workflows/${id}/[^/]+/history/events/\\d+$`),
        ),
        expect.stringMatching(/\/history\/events\/\d+$/),
      ]);
    expect(await page.locator('#conversation-webui').getAttribute('href')).toBe(
      `${WEB_UI}/namespaces/default/workflows/${id}`,
    );
    await expect
      .poll(() => listed(page, id), WAIT)
      .toEqual({
        status: 'idle',
        turns: '1',
        waiting: '',
        agent: agent.taskQueue,
        // YiemCost, from the worker's prices: the same figure the conversation's header shows.
        cost: expect.stringMatching(/^0\.\d{4}$/),
      });
    const { cost } = await listed(page, id);
    await expect
      .poll(() => page.locator('#conversation-spend').textContent(), WAIT)
      .toContain(`cost ${cost}`);
    await expect.poll(() => page.locator('#chat-status').textContent(), WAIT).toBe('ready');

    // Opened again, the conversation shows its transcript as it was streamed.
    await page.reload();
    await page.locator('.text', { hasText: 'mallory gets nothing' }).waitFor(WAIT);
    expect(await page.locator('li[data-role="user"]').allTextContents()).toEqual([
      'Weather in Tokyo and Paris, then pay alice 5 and mallory 500',
    ]);
    expect(await page.locator('.tool').count()).toBe(4);
    expect(await page.locator('.tool[data-tool="transfer"]', { hasText: 'mallory' }).textContent()).toContain(
      'mallory is not a customer',
    );

    await page.close();
  });

  it('a reload mid-turn picks up the running turn, its progress, and cancels it', async () => {
    agent.model.enqueue({
      kind: 'toolCalls',
      text: 'Looking into it.',
      toolCalls: [{ name: 'slowLookup', arguments: { topic: 'Rome' } }],
    });
    const started = new Promise<void>((resolve) => {
      slowStarted = resolve;
    });
    const id = `console-${randomUUID()}`;
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${console_.url}#/conversations/${id}`);
    await say(page, 'Tell me about Rome');
    await started;
    await page.locator('.tool[data-tool="slowLookup"] .progress').waitFor(WAIT);

    await page.reload();
    const slow = page.locator('.tool[data-tool="slowLookup"]');
    await slow.locator('.progress', { hasText: 'reading the archives' }).waitFor(WAIT);
    expect(await page.locator('li[data-role="assistant"] .text').allTextContents()).toEqual([
      'Looking into it.',
    ]);
    expect(await page.locator('li[data-role="user"]').allTextContents()).toEqual(['Tell me about Rome']);
    await expect
      .poll(() => listed(page, id), WAIT)
      .toMatchObject({
        status: 'running',
        turns: '1',
        waiting: '',
      });

    await page.click('#cancel');
    await slow.and(page.locator('[data-state="output-error"]')).waitFor(WAIT);
    await expect
      .poll(() => listed(page, id), WAIT)
      .toMatchObject({
        status: 'idle',
        turns: '1',
      });

    agent.model.enqueue({ kind: 'text', text: 'Rome was not built in a day.' });
    await say(page, 'Just the short version then');
    await page.locator('.text', { hasText: 'Rome was not built in a day.' }).waitFor(WAIT);
    await expect
      .poll(() => listed(page, id), WAIT)
      .toMatchObject({
        status: 'idle',
        turns: '2',
      });
    expect(await page.locator('li[data-role="assistant"]').count()).toBe(2);
    await page.close();
  });

  it('while a tool runs, a steered message joins the turn and a follow-up gets a turn of its own', async () => {
    agent.model.enqueue({
      kind: 'toolCalls',
      text: 'Planning.',
      toolCalls: [{ name: 'heldLookup', arguments: { topic: 'Norway' } }],
    });
    // The model call that reads the steer is held, and so is the follow-up's turn's: each turn is
    // still running while the page looks.
    let releaseFollowUp: () => void = () => {};
    const held = [
      new Promise<void>((resolve) => {
        releaseModel = resolve;
      }),
      new Promise<void>((resolve) => {
        releaseFollowUp = resolve;
      }),
    ];
    const later: ScriptedReply[] = [
      { kind: 'text', text: 'By train, then.' },
      { kind: 'text', text: 'Booked the first night.' },
    ];
    agent.model.respond(async () => {
      await held.shift();
      return later.shift() as ScriptedReply;
    });
    const started = new Promise<void>((resolve) => {
      heldStarted = resolve;
    });
    const id = `console-${randomUUID()}`;
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${console_.url}#/conversations/${id}`);
    await say(page, 'Plan a week in Norway');
    await started;
    await page.locator('.tool[data-tool="heldLookup"]').waitFor(WAIT);
    expect(await page.inputValue('#delivery')).toBe('steer');

    await sendDuringTurn(page, 'Prefer trains to planes', 'steer');
    await sendDuringTurn(page, 'Then book the first night', 'followUp');
    expect(await page.locator('li[data-role="queued"]').allTextContents()).toEqual([
      'Prefer trains to planesqueued · steer',
      'Then book the first nightqueued · follow-up',
    ]);
    releaseHeld();

    // The steer's bubble says where it joined as soon as the model call reads it, before the turn ends.
    await page
      .locator('li[data-role="queued"]', { hasText: 'steer · joined turn 1 after model call 1' })
      .waitFor(WAIT);
    expect(await page.locator('li[data-role="queued"]').allTextContents()).toEqual([
      'Prefer trains to planessteer · joined turn 1 after model call 1',
      'Then book the first nightqueued · follow-up',
    ]);
    expect(await page.locator('.text', { hasText: 'By train, then.' }).count()).toBe(0);
    const releaseSteered = releaseModel;
    releaseModel = () => {
      releaseSteered();
      releaseFollowUp();
    };
    releaseSteered();

    // The follow-up's bubble says, while the turn it opened runs, that it opened it; the steer is in
    // the transcript where it joined.
    await page.locator('li[data-role="queued"]', { hasText: 'follow-up · opened turn 2' }).waitFor(WAIT);
    expect(await page.locator('li[data-role="queued"]').allTextContents()).toEqual([
      'Then book the first nightfollow-up · opened turn 2',
    ]);
    expect(await page.locator('li[data-role="user"]').allTextContents()).toEqual([
      'Plan a week in Norway',
      'Prefer trains to planes',
    ]);
    await page.locator('.text', { hasText: 'By train, then.' }).waitFor(WAIT);
    expect(await page.locator('.text', { hasText: 'Booked the first night.' }).count()).toBe(0);
    releaseFollowUp();

    await page.locator('.text', { hasText: 'Booked the first night.' }).waitFor(WAIT);
    await expect
      .poll(() => page.locator('li[data-role="user"]').allTextContents(), WAIT)
      .toEqual(['Plan a week in Norway', 'Prefer trains to planes', 'Then book the first night']);
    expect(await page.locator('li[data-role="queued"]').count()).toBe(0);
    const [, steered, followUp] = agent.model.requests;
    // The steer joined the running turn's next model call; the follow-up waited for a turn of its own.
    expect(userTexts(steered as never)).toEqual(['Plan a week in Norway', 'Prefer trains to planes']);
    expect(userTexts(followUp as never).at(-1)).toBe('Then book the first night');
    await expect.poll(() => listed(page, id), WAIT).toMatchObject({ status: 'idle', turns: '2' });
    await page.close();
  });

  it('an interrupt sent during a long tool cuts it short, and the model reads the message next', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        text: 'Looking into it.',
        toolCalls: [{ name: 'slowLookup', arguments: { topic: 'Rome' } }],
      },
      { kind: 'text', text: 'Paris it is.' },
    );
    const started = new Promise<void>((resolve) => {
      slowStarted = resolve;
    });
    const id = `console-${randomUUID()}`;
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${console_.url}#/conversations/${id}`);
    await say(page, 'Tell me about Rome');
    await started;
    await page.locator('.tool[data-tool="slowLookup"] .progress').waitFor(WAIT);

    await sendDuringTurn(page, 'Stop, tell me about Paris', 'interrupt');
    await page.locator('.text', { hasText: 'Paris it is.' }).waitFor(WAIT);
    await page
      .locator('.tool[data-tool="slowLookup"]', { hasText: 'interrupted by a new message' })
      .waitFor(WAIT);
    expect(userTexts(agent.model.requests[1] as never)).toEqual([
      'Tell me about Rome',
      'Stop, tell me about Paris',
    ]);
    await expect.poll(() => listed(page, id), WAIT).toMatchObject({ status: 'idle', turns: '1' });
    const refused = await fetch(`${console_.url}api/console/conversations/${id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Later, Venice', delivery: 'later' }),
    });
    expect([refused.status, await refused.text()]).toEqual([
      400,
      expect.stringContaining('delivery must be one of steer, followUp, interrupt; got "later"'),
    ]);
    await page.close();
  });

  it("decides a sub-agent's approval in the console, and opens the sub-agent's conversation from its call", async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ name: 'cashier', arguments: { task: 'pay carol 3' } }] },
      { kind: 'toolCalls', toolCalls: [{ name: 'transfer', arguments: { to: 'carol', amount: 3 } }] },
      { kind: 'text', text: 'Paid carol.' },
      { kind: 'text', text: 'The cashier paid carol.' },
    );
    const id = `console-${randomUUID()}`;
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${console_.url}#/conversations/${id}`);
    await say(page, 'Have the cashier pay carol 3');

    const asked = page.locator('#sub-agent-approvals .approval');
    await asked.waitFor(WAIT);
    expect(await asked.textContent()).toContain(
      'cashier asks to run transfer { "to": "carol", "amount": 3 }',
    );
    // The parent waits for its sub-agent's approval, and the list says whose.
    const childId = (await agent.client.getConversation(id).status()).awaitingApproval?.subAgents[0];
    expect(childId).toMatch(new RegExp(`^${id}\\.cashier\\.turn-1\\.`));
    await expect
      .poll(() => listed(page, id), WAIT)
      .toMatchObject({ status: 'awaitingApproval', waiting: `sub-agent ${childId}` });
    const list = await browser.newPage({ viewport: { width: 1400, height: 500 } });
    await list.goto(console_.url);
    // What the caption of the picture says: the parent waits for its sub-agent, which asks.
    await expect
      .poll(() => listed(list, id), WAIT)
      .toMatchObject({ status: 'awaitingApproval', waiting: `sub-agent ${childId}` });
    await expect.poll(() => listed(list, childId ?? ''), WAIT).toMatchObject({ status: 'awaitingApproval' });
    await picture(list, 'console-list.png');
    await list.close();
    await asked.locator('button', { hasText: 'Approve' }).click();
    await page.locator('.text', { hasText: 'The cashier paid carol.' }).waitFor(WAIT);
    await expect.poll(() => page.locator('#sub-agent-approvals').count(), WAIT).toBe(0);

    const link = page.locator('.tool[data-tool="cashier"] a.sub-agent');
    await link.waitFor(WAIT);
    await link.click();
    const child = `${id}.cashier.turn-1.`;
    await expect.poll(() => page.locator('#conversation-id').textContent(), WAIT).toContain(child);
    await page.locator('.tool[data-tool="transfer"] .output', { hasText: 'sent 3 to carol' }).waitFor(WAIT);
    expect(await page.locator('li[data-role="assistant"] .text').allTextContents()).toEqual(['Paid carol.']);
    await page.close();
  });

  it('off loopback it answers only with the token, which the page keeps from its address', async () => {
    await expect(serveConsole({ client: agent.client, assetsDir: assets, host: '0.0.0.0' })).rejects.toThrow(
      /give it a token/,
    );
    const guarded = await serveConsole({
      client: agent.client,
      assetsDir: assets,
      host: '0.0.0.0',
      token: 'sesame',
    });
    try {
      const api = guarded.url.replace('0.0.0.0', '127.0.0.1');
      const list = `${api}api/console/conversations`;
      expect((await fetch(list)).status).toBe(401);
      expect((await fetch(list, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      expect((await fetch(list, { headers: { authorization: 'Bearer sesame' } })).status).toBe(200);
      expect((await fetch(`${list}?token=sesame`)).status).toBe(200);
      expect((await fetch(`${api}api/chat/anything/stream`)).status).toBe(401);
      // The page's files need no token (they hold nothing private), and nothing outside its folder is served.
      expect((await fetch(api)).status).toBe(200);
      expect((await fetch(`${api}..%2fpackage.json`)).status).toBe(404);

      const page = await browser.newPage();
      await page.goto(api);
      await page.locator('#console-error', { hasText: 'needs `Authorization: Bearer' }).waitFor(WAIT);
      await page.goto(`${api}?token=sesame`);
      await page.locator('#conversations').waitFor(WAIT);
      expect(page.url()).toBe(api);
      await page.reload();
      await page.locator('#conversations').waitFor(WAIT);
      await page.close();
    } finally {
      await guarded.close();
    }
  });
});
