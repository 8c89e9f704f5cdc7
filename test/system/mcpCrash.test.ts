import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import type { McpServerConfig } from '../../src/contract/types/mcp.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { everythingServer, startHttpCounter } from '../support/mcpServers.ts';
import { useCrashScene } from '../support/workerProcess.ts';

const MCP_WORKER = fileURLToPath(new URL('../support/mcpWorker.ts', import.meta.url));
/** Short timeouts, so a lost worker is noticed in seconds. */
const FAST_POLICY = {
  heartbeatTimeout: '2 seconds',
  retry: { maximumAttempts: 3, initialInterval: '100 milliseconds', maximumInterval: '500 milliseconds' },
};

const toolResults = async (conversation: Conversation): Promise<ToolResultMessage[]> =>
  (await conversation.messages()).filter((m): m is ToolResultMessage => m.role === 'toolResult');

/**
 * Workers are separate processes killed with SIGKILL (their stdio MCP servers lose their parent
 * too), as when a machine dies. Their MCP servers come from a config file, as with `yiem worker --mcp`.
 */
describe('MCP tool calls when a worker is killed', () => {
  const scene = useCrashScene('mcp-crash');
  const configFile = () => path.join(scene.bench.markerDir, 'mcp.json');
  const startWorker = (name: string) =>
    scene.startWorker(name, { entry: MCP_WORKER, env: { MCP_CONFIG: configFile() } });
  const startConversation = (id: string, servers: Record<string, McpServerConfig>) =>
    scene.startConversation(id, {
      systemPrompt: 'Survive.',
      prepare: () => writeFile(configFile(), JSON.stringify({ mcpServers: servers })),
    });

  it('finishes a call to server-everything on another worker, repeating no completed call', async () => {
    const conversation = await startConversation('mcp-crash-mid-call', {
      everything: { ...everythingServer(), policy: FAST_POLICY },
    });
    scene.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_echo', name: 'everything__echo', arguments: { message: 'before the crash' } },
        ],
      },
      {
        kind: 'toolCalls',
        toolCalls: [
          {
            id: 'call_long',
            name: 'everything__trigger-long-running-operation',
            arguments: { duration: 3, steps: 6 },
          },
        ],
      },
      { kind: 'text', text: 'Both done.' },
    );
    const first = await startWorker('first');
    const reply = conversation.send('echo, then run the long operation');
    // The long operation is under way on the first worker: a follower reads its progress.
    const seenLive: string[] = [];
    for await (const event of conversation.events({ fromOffset: 0 })) {
      if (event.type === 'toolStart') seenLive.push(`${event.toolCallId}#${event.attempt}`);
      if (event.type === 'toolProgress' && event.toolCallId === 'call_long') break;
    }
    await first.kill();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'Both done.' });
    const [echo, long] = await toolResults(conversation);
    expect(echo).toMatchObject({
      toolName: 'everything__echo',
      isError: false,
      content: [{ text: 'Echo: before the crash' }],
    });
    expect(long).toMatchObject({ toolName: 'everything__trigger-long-running-operation', isError: false });
    expect(long?.content[0]?.text).toContain('Long running operation completed');
    // Three model calls, none repeated; the echo ran once, the long call once per worker.
    expect(scene.model.requestCount).toBe(3);
    const starts: string[] = [];
    for await (const event of conversation.events({ fromOffset: 0 })) {
      if (event.type === 'toolStart') starts.push(`${event.toolCallId}#${event.attempt}`);
      if (event.type === 'turnEnd') break;
    }
    // The log takes a call's events with its result: the killed attempt's were read live only.
    expect(seenLive).toEqual(['call_echo#1', 'call_long#1']);
    expect(starts).toEqual(['call_echo#1', 'call_long#2']);
  });

  it("keeps a stateful server's session on the worker holding it, and opens a new one when that worker dies", async () => {
    const counter = await startHttpCounter();
    try {
      const conversation = await startConversation('mcp-session', {
        counter: {
          url: counter.url,
          session: 'conversation',
          policy: { ...FAST_POLICY, scheduleToStartTimeout: '2 seconds' },
        },
      });
      await Promise.all([startWorker('alpha'), startWorker('beta')]);
      const increment = async (id: string): Promise<ToolResultMessage> => {
        scene.model.enqueue(
          { kind: 'toolCalls', toolCalls: [{ id, name: 'counter__increment', arguments: {} }] },
          { kind: 'text', text: `after ${id}` },
        );
        expect(await conversation.send('count')).toMatchObject({ status: 'completed', reply: `after ${id}` });
        const result = (await toolResults(conversation)).at(-1);
        if (!result) throw new Error('no tool result');
        return result;
      };
      const sessionQueue = (result: ToolResultMessage) =>
        (result.details.mcp as { sessionQueue?: string }).sessionQueue;

      const first = await increment('call_1');
      const second = await increment('call_2');
      const third = await increment('call_3');
      // One session, whichever worker ran each model call: the count goes on.
      expect([first, second, third].map((result) => result.content[0]?.text?.split(' (')[0])).toEqual([
        'count 1',
        'count 2',
        'count 3',
      ]);
      const pinned = sessionQueue(first);
      expect(pinned).toMatch(new RegExp(`^${scene.taskQueue}@mcp-`));
      expect([sessionQueue(second), sessionQueue(third)]).toEqual([pinned, pinned]);
      // Every call was scheduled on the holder's own session queue, whichever worker PREPAREd it.
      const events = (await conversation.handle.fetchHistory()).events ?? [];
      const queues = events.flatMap((event) => {
        const scheduled = event.activityTaskScheduledEventAttributes;
        return scheduled?.activityType?.name === 'executeTool' ? [scheduled.taskQueue?.name] : [];
      });
      expect(queues).toEqual([pinned, pinned, pinned]);
      const holder = scene.workers.find((worker) => pinned?.includes(`-${worker.process.pid}-`));
      const survivor = scene.workers.find((worker) => worker !== holder);
      if (!holder || !survivor) throw new Error(`no worker holds ${pinned}`);

      await holder.kill();
      const lost = await increment('call_lost');
      expect(lost.isError).toBe(true);
      expect(lost.content[0]?.text).toContain('Tool "counter__increment" failed: timed out');
      expect(lost.content[0]?.text).toContain('SCHEDULE_TO_START');

      const fresh = await increment('call_fresh');
      expect(fresh).toMatchObject({ isError: false });
      expect(fresh.content[0]?.text).toMatch(/^count 1 /);
      expect(sessionQueue(fresh)).toContain(`-${survivor.process.pid}-`);
    } finally {
      counter.process.kill();
    }
  });
});
