import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resultText, textResult } from '../../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { replayAndRecord } from '../support/fixtures.ts';

const DEDICATED_TOOLS = fileURLToPath(new URL('../fixtures/tools/dedicated/', import.meta.url));
const renderQueue = `render-${randomUUID()}`;

/** The main worker knows `render` (the model sees it, PREPARE validates it) but must never run it. */
const renderOnMain: AgentTool = {
  name: 'render',
  label: 'Render',
  description: 'Renders a scene (heavy)',
  inputSchema: { type: 'object', properties: { scene: { type: 'string' } }, required: ['scene'] },
  parallelToolExecute: true,
  taskQueue: renderQueue,
  execute: () => textResult(`render ran on the main worker in process ${process.pid}`),
};
const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a key up',
  inputSchema: { type: 'object', properties: { key: { type: 'string' } } },
  parallelToolExecute: true,
  execute: (_id, args) => textResult(`looked up ${String(args.key)} in process ${process.pid}`),
};

/** `yiem worker --no-workflows` in its own process, serving only the render queue. */
async function startDedicatedWorker(address: string): Promise<{ child: ChildProcess; output: string[] }> {
  const child = spawn(
    process.execPath,
    [...YIEM_FROM_SOURCES, 'worker', '--no-workflows', '--no-builtin-tools', '--tools-dir', DEDICATED_TOOLS],
    {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: address,
        YIEM_TASK_QUEUE: renderQueue,
        RENDER_TASK_QUEUE: renderQueue,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const ready = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      output.push(line);
      if (line.startsWith('Worker on task queue')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`dedicated worker exited (${code}): ${output.join('\n')}`)),
    );
  });
  await ready;
  return { child, output };
}

describe('a tool with its own task queue', () => {
  let agent: TestAgent;
  let dedicated: { child: ChildProcess; output: string[] };
  beforeAll(async () => {
    dedicated = await startDedicatedWorker(inject('temporalAddress'));
    agent = await startTestAgent({ tools: [renderOnMain, lookup] });
  });
  afterAll(async () => {
    await agent?.close();
    if (dedicated && dedicated.child.exitCode === null) {
      const exited = once(dedicated.child, 'exit');
      dedicated.child.kill('SIGTERM');
      await exited;
    }
  });

  it('runs on the dedicated worker while the other tools run on the main one', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'r1', name: 'render', arguments: { scene: 'castle' } },
          { id: 'l1', name: 'lookup', arguments: { key: 'k' } },
        ],
      },
      { kind: 'text', text: 'done' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Scale out.' });
    expect((await conversation.send('render the castle')).status).toBe('completed');

    const results = (await conversation.messages()).filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    const text = Object.fromEntries(results.map((result) => [result.toolName, resultText(result.content)]));
    expect(text.render).toBe(`rendered castle in process ${dedicated.child.pid}`);
    expect(text.lookup).toBe(`looked up k in process ${process.pid}`);
    expect(dedicated.child.pid).not.toBe(process.pid);

    const history = await conversation.handle.fetchHistory();
    const scheduled = (history.events ?? []).flatMap((event) => {
      const attributes = event.activityTaskScheduledEventAttributes;
      return attributes
        ? [
            {
              type: attributes.activityType?.name,
              id: attributes.activityId,
              queue: attributes.taskQueue?.name,
            },
          ]
        : [];
    });
    expect(scheduled.filter((activity) => activity.type === 'executeTool')).toEqual([
      { type: 'executeTool', id: 'tool-1-r1', queue: renderQueue },
      { type: 'executeTool', id: 'tool-1-l1', queue: agent.taskQueue },
    ]);
    expect(
      scheduled.filter((activity) => activity.type === 'callModel').map((activity) => activity.queue),
    ).toEqual([agent.taskQueue, agent.taskQueue]);
    await conversation.end();
    await replayAndRecord(conversation.handle, 'conversation-dedicated-queue');
  });
});

/** Waits until `count` workers poll the activities of `taskQueue` (a precondition, not a timing check). */
async function untilPollers(agent: TestAgent, taskQueue: string, count: number): Promise<string[]> {
  for (;;) {
    const { pollers } = await agent.client.client.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue, kind: 1 },
      taskQueueType: 2,
    });
    const identities = (pollers ?? []).map((poller) => poller.identity ?? '');
    if (identities.length >= count) return identities;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('two agents on one task queue', () => {
  const shared = `shared-${randomUUID()}`;
  let devStack: TestAgent;
  let users: TestAgent;
  beforeAll(async () => {
    // Like `yiem dev` and a user's own worker left on the same queue: another model, other tools.
    devStack = await startTestAgent({ tools: [lookup], worker: { connection: { taskQueue: shared } } });
    users = await startTestAgent({ tools: [renderOnMain], worker: { connection: { taskQueue: shared } } });
  });
  afterAll(async () => {
    await users?.close();
    await devStack?.close();
  });

  // A worker that has not polled since the other started is seen to run once it polls again: up to
  // a long poll (a minute) later.
  it("refuses the model call, naming both workers, instead of answering with either one's model", {
    timeout: 150_000,
  }, async () => {
    const identities = await untilPollers(users, shared, 2);
    expect(identities.every((identity) => / yiem\(m[0-9a-f]{8} t[0-9a-f]{8} L\)$/.test(identity))).toBe(true);
    devStack.model.enqueue({ kind: 'text', text: 'the demo model answers' });
    users.model.enqueue({ kind: 'text', text: "the user's model answers" });
    const conversation = await users.client.startConversation({ systemPrompt: 'Whose model?' });
    const result = await conversation.send('who answers?');
    expect(result.status).toBe('failed');
    expect(result.error).toContain(`shares task queue "${shared}" with worker`);
    expect(result.error).toContain('give each agent its own task queue');
    for (const identity of identities) expect(result.error).toContain(identity);
    expect(devStack.model.requestCount + users.model.requestCount).toBe(0);
  });
});

describe('a conversation offered a tool its worker does not have', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [lookup] });
  });
  afterAll(async () => agent?.close());

  it('fails the turn naming the worker, its queue and the missing tool', async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      tools: ['lookup', 'render'],
    });
    const result = await conversation.send('render it');
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(
      new RegExp(
        `^The model call failed: Worker \\d+@\\S+ .*yiem\\(.*\\) on task queue "${agent.taskQueue}" does not have "render", offered by this conversation \\(it has: lookup\\)`,
      ),
    );
    expect(agent.model.requestCount).toBe(0);
  });
});
