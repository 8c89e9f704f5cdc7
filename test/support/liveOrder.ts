import { expect } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import type { TestAgent } from './agentHarness.ts';
import { SURVEY_TURN_EVENTS } from './surveyTurn.ts';

/** The tool of turn 2, slow enough that its events are previewed on the live channel. */
export const lookupTool: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks something up',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return textResult('found');
  },
};

const TEXT_TURN = ['turnStart', 'messageStart', 'textDelta', 'messageEnd', 'turnEnd'];

/** Follows `conversation` from `fromOffset` until turn `lastTurn` ends: its events by turn, as types. */
async function follow(
  conversation: Conversation,
  fromOffset: number,
  lastTurn: number,
  seen: ConversationEventItem[] = [],
): Promise<Map<number, string[]>> {
  for await (const event of conversation.events({ fromOffset, signal: AbortSignal.timeout(60_000) })) {
    seen.push(event);
    if (event.type === 'turnEnd' && event.result.turn === lastTurn) break;
  }
  const byTurn = new Map<number, string[]>();
  for (const event of seen) byTurn.set(event.turn, [...(byTurn.get(event.turn) ?? []), event.type]);
  return byTurn;
}

/**
 * Five turns of 20 KB messages, a tool call in turn 2, continue-as-new every 3 turns; one follower
 * from offset 0 and one from turn 2's first event: each sees every turn's events once, in order.
 */
export async function followAcrossContinueAsNew(agent: TestAgent): Promise<void> {
  agent.model.respond((request) => {
    const messages = request.body.messages;
    const users = messages.filter((message) => message.role === 'user').length;
    if (users === 2 && messages.at(-1)?.role === 'user') {
      return { kind: 'toolCalls', toolCalls: [{ name: 'lookup', arguments: {} }] };
    }
    return { kind: 'text', text: `reply ${users}` };
  });
  const conversation = await agent.client.startConversation({ systemPrompt: '', maxTurnsPerRun: 3 });
  const fromStart: ConversationEventItem[] = [];
  const first = follow(conversation, 0, 5, fromStart);
  const big = (turn: number) => `${turn} ${'x'.repeat(20_000)}`;
  await conversation.send(big(1));
  await conversation.send(big(2));
  // A second follower starts at turn 2's first event, while the conversation goes on.
  await expect.poll(() => fromStart.some((event) => event.type === 'turnEnd' && event.turn === 2)).toBe(true);
  const middle = fromStart.find((event) => event.type === 'turnStart' && event.turn === 2)?.offset ?? -1;
  const second = follow(conversation, middle, 5);
  for (let turn = 3; turn <= 5; turn++) await conversation.send(big(turn));

  expect([...(await first)]).toEqual([
    [1, TEXT_TURN],
    [2, SURVEY_TURN_EVENTS],
    [3, TEXT_TURN],
    [4, TEXT_TURN],
    [5, TEXT_TURN],
  ]);
  expect([...(await second)]).toEqual([
    [2, SURVEY_TURN_EVENTS],
    [3, TEXT_TURN],
    [4, TEXT_TURN],
    [5, TEXT_TURN],
  ]);
  const texts = fromStart.flatMap((event) => (event.type === 'textDelta' ? [event.text] : []));
  expect(texts.join('|')).toBe('reply 1|reply 2|reply 3|reply 4|reply 5');
}
