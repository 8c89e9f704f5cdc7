import { setTimeout as sleep } from 'node:timers/promises';
import type { Conversation } from '../../src/client/client.ts';
import type { FollowEventsOptions } from '../../src/client/conversationEvents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool, ConversationEventItem } from '../../src/contract/types.ts';

/**
 * A tool `name` that runs for its `ms` argument and reports progress every 250 ms, counting its runs
 * and when each ended (by the test's clock): a call long enough for events to go live.
 */
export function surveyTool(name: string) {
  const runs = { started: 0, finishedAt: [] as number[] };
  const tool: AgentTool = {
    name,
    label: 'Survey',
    description: 'Takes a while and reports progress',
    parallelToolExecute: true,
    inputSchema: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] },
    async execute(_id, args, _signal, onPartialResult) {
      const { ms } = args as { ms: number };
      runs.started += 1;
      for (let elapsed = 0; elapsed < ms; elapsed += 250) {
        onPartialResult({ elapsed });
        await sleep(250);
      }
      runs.finishedAt.push(Date.now());
      return textResult('4,200 answers');
    },
  };
  return Object.assign(runs, { tool });
}

export const SURVEY_REPLY = 'Forty-two people answered the survey.';

/** A survey turn's events apart from tool progress (text deltas merged). */
export const SURVEY_TURN_EVENTS = [
  'turnStart',
  'messageStart',
  'messageEnd',
  'toolStart',
  'toolEnd',
  'messageStart',
  'textDelta',
  'messageEnd',
  'turnEnd',
];

/** The first turn's events from `options.fromOffset` (default 0), with when each arrived. */
export async function collectTurn(conversation: Conversation, options: FollowEventsOptions = {}) {
  const seen: { event: ConversationEventItem; at: number }[] = [];
  for await (const event of conversation.events({ fromOffset: 0, ...options })) {
    seen.push({ event, at: Date.now() });
    if (event.type === 'turnEnd') break;
  }
  return seen;
}

/** What a user sees: the event types in order (text deltas merged, progress apart) and the text. */
export function userView(seen: { event: ConversationEventItem }[]) {
  const types = seen
    .map(({ event }) => event.type)
    .filter((type, index, all) => type !== 'textDelta' || all[index - 1] !== 'textDelta');
  return {
    types: types.filter((type) => type !== 'toolProgress'),
    progress: types.filter((type) => type === 'toolProgress').length,
    text: seen.map(({ event }) => (event.type === 'textDelta' ? event.text : '')).join(''),
  };
}
