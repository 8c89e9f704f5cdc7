import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { createToolProject, type ToolProject } from '../support/toolProject.ts';
import { useCrashScene } from '../support/workerProcess.ts';

const TOOLS_PAGE = fileURLToPath(new URL('../../docs/tools.md', import.meta.url));

/** docs/tools.md's `tools/sendInvoice.ts` ("Tools that must not run twice"), as the page prints it. */
async function docsSendInvoice(): Promise<string> {
  const page = await readFile(TOOLS_PAGE, 'utf8');
  const match = /\/\/ tools\/sendInvoice\.ts\n([\s\S]*?)\n```/.exec(page);
  if (!match?.[1]) throw new Error('docs/tools.md has no tools/sendInvoice.ts example');
  return match[1];
}

/**
 * The docs' at-most-once tool, written in TypeScript and loaded from a tools folder (through tsx),
 * whose worker process is SIGKILLed in the middle of a call: the invoice is sent once, and the
 * tool's `currentToolCall()` and `reconcile` work as in a JavaScript file.
 */
describe('the docs’ sendInvoice.ts under a worker SIGKILL', () => {
  const scene = useCrashScene('send-invoice');
  let project: ToolProject | undefined;
  afterEach(async () => {
    await project?.remove();
  });

  const outbox = async (): Promise<unknown[]> => {
    const dir = path.join(project?.dir ?? '', 'outbox');
    const files = (await readdir(dir)).filter((file) => file.endsWith('.json'));
    return Promise.all(files.map(async (file) => JSON.parse(await readFile(path.join(dir, file), 'utf8'))));
  };
  const lastToolEnd = async (conversation: Conversation): Promise<ConversationEventItem | undefined> => {
    let end: ConversationEventItem | undefined;
    for await (const event of conversation.events()) {
      if (event.type === 'toolEnd') end = event;
      if (event.type === 'turnEnd') return end;
    }
    return end;
  };

  /** The first worker dies as the call ends (`KILL_ON_TOOL_END`) or starts; a second one takes over. */
  const killDuringInvoice = async (when: 'KILL_ON_TOOL_END' | 'KILL_ON_TOOL_START') => {
    project = await createToolProject({ 'sendInvoice.ts': await docsSendInvoice() });
    const conversation = await scene.startConversation(`invoice-${when}`, { systemPrompt: 'Invoice.' });
    scene.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_invoice', name: 'sendInvoice', arguments: { customer: 'Ada', amount: 40 } }],
      },
      { kind: 'text', text: 'Invoice handled.' },
    );
    const tools = { TOOLS_DIR: project.toolsDir };
    const first = await scene.startWorker('first', {
      env: { ...tools, [when]: 'sendInvoice' },
      cwd: project.dir,
    });
    const died = once(first.process, 'exit');
    const reply = conversation.send('Send Ada an invoice of 40');
    await died;
    await scene.startWorker('second', { env: tools, cwd: project.dir });
    // The next attempt waits for the tool's heartbeat timeout (30 s, the README's default).
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Invoice handled.' });
    expect(await outbox()).toEqual([{ customer: 'Ada', amount: 40 }]);
    const result = (await conversation.messages())[2] as ToolResultMessage;
    return { result, end: await lastToolEnd(conversation) };
  };

  it('killed after the invoice was sent: reconcile finds it, none is sent again', async () => {
    const { result, end } = await killDuringInvoice('KILL_ON_TOOL_END');
    expect(result).toMatchObject({ isError: false });
    expect(result.content[0]?.text).toBe('Invoice of 40 sent to Ada (found in the outbox)');
    expect(end).toMatchObject({ attempt: 2, outcome: 'reconciled' });
  });

  it('killed before it ran: reconcile says not done, and the invoice is sent once', async () => {
    const { result, end } = await killDuringInvoice('KILL_ON_TOOL_START');
    expect(result).toMatchObject({ isError: false });
    expect(result.content[0]?.text).toBe('Invoice of 40 sent to Ada');
    expect(end).toMatchObject({ attempt: 2, outcome: 'rerun' });
  });
});
