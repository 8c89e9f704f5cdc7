import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { createAgentWorker } from '../../src/worker/worker.ts';
import { startTestAgent, type TestAgent, workflowBundle } from '../support/agentHarness.ts';
import { scheduledActivities } from '../support/history.ts';
import {
  counterServer,
  everythingServer,
  filesystemServer,
  startHttpCounter,
} from '../support/mcpServers.ts';

const localTool: AgentTool = {
  name: 'localEcho',
  label: 'Local Echo',
  description: 'Echoes locally',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  parallelToolExecute: true,
  execute: (_id, args) => textResult(String(args.text)),
};

const offeredTools = (agent: TestAgent, request: number): string[] =>
  (agent.model.requests[request]?.body.tools ?? []).map((tool) =>
    tool.type === 'function' ? tool.function.name : tool.type,
  );

const toolResults = (messages: { role: string }[]): ToolResultMessage[] =>
  messages.filter((message): message is ToolResultMessage => message.role === 'toolResult');

describe('tools from MCP servers', () => {
  let agent: TestAgent;
  let root: string;
  let httpCounter: Awaited<ReturnType<typeof startHttpCounter>>;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'yiem-mcp-fs-'));
    await writeFile(path.join(root, 'notes.txt'), 'Buy oat milk.\n');
    httpCounter = await startHttpCounter();
    agent = await startTestAgent({
      tools: [localTool],
      worker: {
        tools: {
          mcpServers: {
            fs: filesystemServer(root),
            everything: { ...everythingServer(), requiresApproval: ['get-sum'] },
            counter: {
              ...counterServer({ COUNTER_CANCELLED_FILE: path.join(root, 'cancelled') }),
              // Heartbeats every 2/3 s: a cancelled turn reaches a running call within a second.
              policy: { heartbeatTimeout: '2 seconds' },
            },
            web: {
              url: httpCounter.url,
              policy: { retry: { initialInterval: '100 milliseconds', maximumInterval: '500 milliseconds' } },
            },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await agent?.close();
    httpCounter?.process.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('reads a file through server-filesystem: model, PREPARE, executeTool, MCP server, result to the model', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Use files.' });
    const file = path.join(root, 'notes.txt');
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_read', name: 'fs__read_text_file', arguments: { path: file } }],
      },
      { kind: 'text', text: 'You need oat milk.' },
    );
    const start = agent.model.requestCount;
    expect(await conversation.send('What is in my notes?')).toMatchObject({
      status: 'completed',
      reply: 'You need oat milk.',
    });

    const offered = offeredTools(agent, start);
    expect(offered).toContain('localEcho');
    expect(offered).toEqual(
      expect.arrayContaining(['fs__read_text_file', 'fs__list_directory', 'everything__echo']),
    );
    const [result] = toolResults(await conversation.messages());
    expect(result).toMatchObject({ toolName: 'fs__read_text_file', isError: false });
    expect(result?.content[0]?.text).toBe('Buy oat milk.\n');
    expect(result?.details).toMatchObject({ mcp: { server: 'fs', tool: 'read_text_file' } });
    // The model read the server's answer as the tool result.
    const sent = agent.model.requests[start + 1]?.body.messages.at(-1);
    expect(sent).toMatchObject({ role: 'tool', tool_call_id: 'call_read', content: 'Buy oat milk.\n' });

    const activity = (await scheduledActivities(conversation.handle)).find((a) => a.type === 'executeTool');
    expect(activity?.summary).toBe(`fs__read_text_file(path: ${JSON.stringify(file)})`);
    const events = agent.events
      .filter((event) => event.toolCallId === 'call_read')
      .map((event) => event.type);
    expect(events).toEqual(['toolExecutionStart', 'toolExecutionEnd']);
  });

  it("gives the model server-filesystem's own error (isError) at once, without retrying it", async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Use files.' });
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_outside', name: 'fs__read_text_file', arguments: { path: '/etc/hostname' } }],
      },
      { kind: 'text', text: 'Not allowed.' },
    );
    await conversation.send('Read /etc/hostname');

    const [result] = toolResults(await conversation.messages());
    expect(result?.isError).toBe(true);
    expect(result?.content[0]?.text).toMatch(
      /^Tool "fs__read_text_file" failed: MCP tool "read_text_file" of server "fs" failed: .*Access denied/,
    );
    expect(result?.details).toMatchObject({ mcp: { server: 'fs', tool: 'read_text_file' }, attempt: 1 });
  });

  it("refuses in PREPARE a call that breaks the server's inputSchema, without running it", async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Use files.' });
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_bad', name: 'fs__read_text_file', arguments: { head: 'ten' } }],
      },
      { kind: 'text', text: 'I will fix that.' },
    );
    await conversation.send('Read something');

    const [result] = toolResults(await conversation.messages());
    expect(result?.isError).toBe(true);
    expect(result?.content[0]?.text).toContain('Invalid arguments for tool "fs__read_text_file"');
    expect(result?.content[0]?.text).toContain("must have required property 'path'");
    expect(result?.content[0]?.text).toContain('/head must be number');
    expect((await scheduledActivities(conversation.handle)).map((a) => a.type)).not.toContain('executeTool');
    expect(agent.events.some((event) => event.toolCallId === 'call_bad')).toBe(false);
  });

  it("maps server-everything's image and structured results, and asks approval where configured", async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Test.' });
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_image', name: 'everything__get-tiny-image', arguments: {} },
          { id: 'call_sum', name: 'everything__get-sum', arguments: { a: 2, b: 3 } },
        ],
      },
      { kind: 'text', text: 'Done.' },
    );
    const reply = conversation.send('Show me an image and add 2 and 3');
    await expect
      .poll(async () => (await conversation.status()).pendingApprovals.length, { timeout: 20_000 })
      .toBe(1);
    const [pending] = (await conversation.status()).pendingApprovals;
    expect(pending).toMatchObject({ toolCallId: 'call_sum', toolName: 'everything__get-sum' });
    await conversation.approve('call_sum');
    await reply;

    const [image, sum] = toolResults(await conversation.messages());
    expect(image?.content.map((block) => block.text).join('\n')).toMatch(/\[image image\/png, \d+ bytes\]/);
    expect(image?.details).toMatchObject({ mcp: { content: [expect.objectContaining({ type: 'image' })] } });
    expect(sum?.content[0]?.text).toContain('5');
  });

  it('offers a tool the server added in the next turn (tools/list_changed)', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Grow.' });
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_add', name: 'counter__addTool', arguments: { name: 'fresh' } }],
      },
      { kind: 'text', text: 'Added.' },
    );
    const before = agent.model.requestCount;
    await conversation.send('Add a tool called fresh');
    expect(offeredTools(agent, before)).not.toContain('counter__fresh');

    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_fresh', name: 'counter__fresh', arguments: {} }] },
      { kind: 'text', text: 'It works.' },
    );
    const next = agent.model.requestCount;
    await conversation.send('Use it');
    expect(offeredTools(agent, next)).toContain('counter__fresh');
    const results = toolResults(await conversation.messages());
    expect(results.at(-1)).toMatchObject({
      toolName: 'counter__fresh',
      isError: false,
      content: [{ text: 'I am fresh' }],
    });
  });

  it('answers a call whose server died with a clear error, and restarts the server on the next call', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Count.' });
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_crash', name: 'counter__crash', arguments: {} }] },
      { kind: 'text', text: 'It broke.' },
      { kind: 'toolCalls', toolCalls: [{ id: 'call_again', name: 'counter__increment', arguments: {} }] },
      { kind: 'text', text: 'Back.' },
    );
    expect(await conversation.send('Crash it')).toMatchObject({ status: 'completed', reply: 'It broke.' });
    expect(await conversation.send('Count')).toMatchObject({ status: 'completed', reply: 'Back.' });

    const [crashed, again] = toolResults(await conversation.messages());
    expect(crashed?.isError).toBe(true);
    expect(crashed?.content[0]?.text).toContain('MCP server "counter" stopped during the call to "crash"');
    expect(crashed?.content[0]?.text).toContain('it is started again on the next call');
    // Only once: a call the server may have half done is not repeated.
    expect(
      (await scheduledActivities(conversation.handle)).filter((a) => a.activityId.includes('call_crash')),
    ).toHaveLength(1);
    expect(again).toMatchObject({ isError: false });
    expect(again?.content[0]?.text).toMatch(/^count 1 \(server \d+\)$/);
  });

  it('calls a streamable-HTTP server over one connection per worker', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Count.' });
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_web_1', name: 'web__increment', arguments: {} },
          { id: 'call_web_2', name: 'web__increment', arguments: {} },
        ],
      },
      { kind: 'text', text: 'Counted.' },
    );
    await conversation.send('Count twice');
    const counts = toolResults(await conversation.messages()).map(
      (result) => result.content[0]?.text?.split(' (')[0],
    );
    expect(counts.sort()).toEqual(['count 1', 'count 2']);
  });

  it('reconnects to a streamable-HTTP server that restarted, on the retry of the call that found it gone', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Count.' });
    const count = async (id: string): Promise<ToolResultMessage | undefined> => {
      agent.model.enqueue(
        { kind: 'toolCalls', toolCalls: [{ id, name: 'web__increment', arguments: {} }] },
        { kind: 'text', text: 'Counted.' },
      );
      await conversation.send('count');
      return toolResults(await conversation.messages()).at(-1);
    };
    expect((await count('call_before'))?.isError).toBe(false);
    const exited = new Promise((resolve) => httpCounter.process.once('exit', resolve));
    httpCounter.process.kill();
    await exited;
    httpCounter = await startHttpCounter(httpCounter.port);

    const after = await count('call_after');
    expect(after).toMatchObject({ isError: false });
    // A new server, a new session: its count starts again.
    expect(after?.content[0]?.text).toMatch(/^count 1 /);
  });

  it('cancels a running MCP call when its turn is cancelled, and the server is told', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: 'Wait.' });
    agent.model.enqueue({
      kind: 'toolCalls',
      toolCalls: [{ id: 'call_sleep', name: 'counter__sleep', arguments: {} }],
    });
    const reply = conversation.send('Wait for ever');
    for await (const event of conversation.events({ fromOffset: 0 })) {
      if (event.type === 'toolStart' && event.toolCallId === 'call_sleep') break;
    }
    await conversation.cancel();
    expect(await reply).toMatchObject({ status: 'cancelled' });
    const [result] = toolResults(await conversation.messages());
    expect(result).toMatchObject({ toolCallId: 'call_sleep', isError: true });
    // The activity saw the cancellation at its next heartbeat and the SDK sent notifications/cancelled.
    await expect.poll(() => existsSync(path.join(root, 'cancelled')), { timeout: 15_000 }).toBe(true);
  });

  it('refuses to start a worker whose MCP tool takes the name of a local tool', async () => {
    const clash: AgentTool = { ...localTool, name: 'counter__increment' };
    await expect(
      createAgentWorker({
        connection: { address: agent.address, taskQueue: `clash-${randomUUID()}` },
        tools: { builtinTools: false, tools: [clash], mcpServers: { counter: counterServer() } },
        worker: { workflowBundle: await workflowBundle() },
      }),
    ).rejects.toThrow(
      'Duplicate tool name "counter__increment": registered by registerTool() and again by MCP server "counter"',
    );
  });
});
