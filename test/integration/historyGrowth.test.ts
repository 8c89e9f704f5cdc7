import { randomUUID } from 'node:crypto';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { eventsQuery } from '../../src/contract/definitions.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const MESSAGE_BYTES = 1_000;
const TURNS = 50;

/** Same size every turn, so every turn adds the same new messages. */
const userText = (turn: number): string => `${String(turn).padStart(3, '0')} ${'u'.repeat(MESSAGE_BYTES)}`;
const replyText = (turn: number): string => `${String(turn).padStart(3, '0')} ${'r'.repeat(MESSAGE_BYTES)}`;

async function historyBytes(conversation: Conversation): Promise<number> {
  return historyToJSON(await conversation.handle.fetchHistory()).length;
}

/** History bytes a turn adds: measured around it. */
async function turnGrowth(conversation: Conversation, turn: number): Promise<number> {
  const before = await historyBytes(conversation);
  await conversation.send(userText(turn));
  return (await historyBytes(conversation)) - before;
}

/** A tool whose result no one could have written into history before it ran: a fresh token. */
const mintTool: ActivityTool = {
  name: 'mint',
  label: 'Mint',
  description: 'Returns a new token.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  parallelToolExecute: false,
  execute: () => ({
    content: [{ type: 'text', text: `minted-${randomUUID()}` }],
    details: {},
    usage: null,
    terminate: false,
  }),
};

/** The payloads of the events a turn added to the conversation's history, as text. */
async function turnPayloads(conversation: Conversation, send: () => Promise<unknown>): Promise<string[]> {
  const before = (await conversation.handle.fetchHistory()).events?.length ?? 0;
  await send();
  const events = (await conversation.handle.fetchHistory()).events?.slice(before) ?? [];
  const texts: string[] = [];
  const visit = (value: unknown): void => {
    if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
    const data = (value as { data?: unknown }).data;
    if ('metadata' in value && data instanceof Uint8Array) texts.push(Buffer.from(data).toString('utf8'));
    else for (const child of Object.values(value)) visit(child);
  };
  visit(events);
  return texts;
}

const occurrences = (texts: string[], needle: string): number =>
  texts.reduce((count, text) => count + text.split(needle).length - 1, 0);

describe('history discipline', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [mintTool] });
  });
  afterAll(async () => agent?.close());

  it(`adds as many bytes to history on turn ${TURNS} as on turn 5, though the context grew`, async () => {
    agent.model.respond(() => ({ kind: 'text', text: replyText(agent.model.requestCount) }));
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    const growth = new Map<number, number>();
    for (let turn = 1; turn <= TURNS; turn++) {
      if (turn === 5 || turn === TURNS) growth.set(turn, await turnGrowth(conversation, turn));
      else await conversation.send(userText(turn));
    }
    const early = growth.get(5) ?? 0;
    const late = growth.get(TURNS) ?? 0;

    // By now every model call sends the whole context: about 100 KB of earlier messages.
    const contextBytes = JSON.stringify(agent.model.lastRequest()?.body.messages).length;
    expect(contextBytes).toBeGreaterThan((TURNS - 1) * 2 * MESSAGE_BYTES);
    // Allowance for longer event ids and counters ("turn 50" vs "turn 5"), not for any message.
    expect(late - early).toBeLessThan(200);
  });

  it('records each user message and each tool result once in the turn that brought it', async () => {
    agent.model.respond((request) => {
      const last = request.body.messages.at(-1);
      const asks = last?.role === 'user' && String(last.content).startsWith('mint');
      return asks
        ? {
            kind: 'toolCalls',
            toolCalls: [{ id: `call_${agent.model.requestCount}`, name: 'mint', arguments: {} }],
          }
        : { kind: 'text', text: 'noted' };
    });
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    // The run's first model call has no earlier call to continue from: later turns are the steady state.
    await conversation.send('first');
    const message = `remember ${randomUUID()} ${'m'.repeat(MESSAGE_BYTES)}`;
    const textTurn = await turnPayloads(conversation, () => conversation.send(message));
    expect(occurrences(textTurn, message)).toBe(1);

    const toolRequest = `mint ${randomUUID()} ${'t'.repeat(MESSAGE_BYTES)}`;
    const toolTurn = await turnPayloads(conversation, () => conversation.send(toolRequest));
    expect(occurrences(toolTurn, toolRequest)).toBe(1);
    const minted = /minted-[0-9a-f-]{36}/.exec(toolTurn.join('\n'))?.[0] ?? 'no minted token in history';
    expect(occurrences(toolTurn, minted)).toBe(1);

    // Followers still read the tool's end with its text, rebuilt from the result.
    const { items } = await conversation.handle.query(eventsQuery, 0);
    const ends = items.map(({ event }) => event).filter((event) => event.type === 'toolEnd');
    expect(ends.map((event) => event.text)).toEqual([minted]);

    // The model read all three whole.
    const sent = JSON.stringify(agent.model.lastRequest()?.body.messages);
    for (const text of [message, toolRequest, minted])
      expect(sent).toContain(JSON.stringify(text).slice(1, -1));
  });
});
