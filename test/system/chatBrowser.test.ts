import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatEndpoint } from '../../src/client/chatEndpoint.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

/** Debian's chromium; never a downloaded browser. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const APP_ROOT = fileURLToPath(new URL('./chatApp/', import.meta.url));
const WAIT = { timeout: 30_000 };

let releaseSlow: () => void = () => {};
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
  execute: async (_id, args, _signal, onPartialResult) => {
    onPartialResult?.({ step: 'started' });
    const released = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    slowStarted();
    await released;
    return textResult(`found ${String(args.topic)}`);
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

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** The built app and the endpoint on one origin, as a web app usually mounts its chat route. */
async function serveApp(
  dist: string,
  agent: TestAgent,
  token?: string,
): Promise<{ url: string; server: Server }> {
  const endpoint = createChatEndpoint({
    client: agent.client,
    newConversation: () => ({ systemPrompt: 'You help.', toolExecution: 'parallel' }),
    ...(token ? { token } : {}),
  });
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname.startsWith('/api/chat')) return endpoint.node(request, response);
    const file = path.join(dist, url.pathname === '/' ? 'index.html' : path.normalize(url.pathname));
    readFile(file).then(
      (content) => {
        response.writeHead(200, {
          'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
        });
        response.end(content);
      },
      () => {
        response.writeHead(404);
        response.end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

async function say(page: Page, text: string): Promise<void> {
  await page.fill('#input', text);
  await page.click('#send');
}

describe('a useChat app built from the AI SDK packages, in headless Chromium', () => {
  let agent: TestAgent;
  let dist: string;
  let app: { url: string; server: Server };
  let browser: Browser;

  beforeAll(async () => {
    agent = await startTestAgent({ tools: [lookup, slowLookup, transfer] });
    dist = await mkdtemp(path.join(tmpdir(), 'yiem-chat-app-'));
    await build({
      root: APP_ROOT,
      configFile: false,
      logLevel: 'error',
      build: { outDir: dist, emptyOutDir: true },
    });
    app = await serveApp(dist, agent);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => app?.server.close(resolve));
    await agent?.close();
    if (dist) await rm(dist, { recursive: true, force: true });
  });

  it('chats with parallel tool calls and an approval asked and given on the page', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        text: 'Checking both, then paying.',
        toolCalls: [
          { name: 'lookup', arguments: { city: 'Tokyo' } },
          { name: 'lookup', arguments: { city: 'Paris' } },
          { name: 'transfer', arguments: { to: 'alice', amount: 5 } },
        ],
      },
      { kind: 'text', text: 'Both sunny, and alice has her 5.' },
    );
    const page = await browser.newPage();
    await page.goto(`${app.url}?chat=browser-${randomUUID()}`);
    await say(page, 'Weather in Tokyo and Paris, then pay alice 5');

    await page.locator('button.approve').click(WAIT);
    const reply = page.locator('li[data-role="assistant"] .text', { hasText: 'alice has her 5' });
    await reply.waitFor(WAIT);
    const tools = page.locator('li[data-role="assistant"] .tool');
    expect(await tools.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-state')))).toEqual([
      'output-available',
      'output-available',
      'output-available',
    ]);
    await expect
      .poll(() => page.locator('.tool[data-type="tool-lookup"] .input').allTextContents())
      .toEqual(expect.arrayContaining(['{"city":"Tokyo"}', '{"city":"Paris"}']));
    expect(await page.locator('.tool[data-type="tool-transfer"] .output').textContent()).toBe(
      'sent 5 to alice',
    );
    expect(await page.locator('#status').textContent()).toBe('ready');
    await page.close();
  });

  it('a reload mid-turn picks up the running turn and follows it to its end', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        text: 'Looking into it.',
        toolCalls: [{ name: 'slowLookup', arguments: { topic: 'Rome' } }],
      },
      { kind: 'text', text: 'Rome was not built in a day.' },
    );
    const started = new Promise<void>((resolve) => {
      slowStarted = resolve;
    });
    const page = await browser.newPage();
    await page.goto(`${app.url}?chat=browser-${randomUUID()}`);
    await say(page, 'Tell me about Rome');
    await page.locator('.tool[data-type="tool-slowLookup"]').waitFor(WAIT);
    await started;

    await page.reload();
    const slow = page.locator('.tool[data-type="tool-slowLookup"]');
    await slow.waitFor(WAIT);
    expect(await page.locator('li[data-role="assistant"] .text').first().textContent()).toBe(
      'Looking into it.',
    );
    releaseSlow();
    await page.locator('.text', { hasText: 'Rome was not built in a day.' }).waitFor(WAIT);
    expect(await slow.getAttribute('data-state')).toBe('output-available');
    expect(await page.locator('li[data-role="assistant"]').count()).toBe(1);
    expect(await page.locator('.tool').count()).toBe(1);
    await page.close();
  });

  it('an endpoint with a token refuses the page without it, and serves it with it', async () => {
    const guarded = await serveApp(dist, agent, 'sesame');
    try {
      const page = await browser.newPage();
      await page.goto(`${guarded.url}?chat=browser-${randomUUID()}`);
      await say(page, 'hello');
      await expect.poll(() => page.locator('#error').textContent(), WAIT).toMatch(/Authorization: Bearer/);

      agent.model.enqueue({ kind: 'text', text: 'Welcome in.' });
      await page.goto(`${guarded.url}?chat=browser-${randomUUID()}&token=sesame`);
      await say(page, 'hello');
      await page.locator('.text', { hasText: 'Welcome in.' }).waitFor(WAIT);
      await page.close();
    } finally {
      await new Promise((resolve) => guarded.server.close(resolve));
    }
  });
});
