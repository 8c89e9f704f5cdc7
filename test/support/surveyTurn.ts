import { setTimeout as sleep } from 'node:timers/promises';
import type { Conversation } from '../../src/client/client.ts';
import type { FollowEventsOptions } from '../../src/client/conversationEvents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import type { ScriptedModel } from '../../src/testing/index.ts';

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

/** Scripts a survey turn: the model asks for `ms` of survey, then streams its reply for 1.6 s (four pieces, 400 ms apart). */
export function scriptSurveyTurn(model: Pick<ScriptedModel, 'enqueue'>, ms: number, tool = 'survey'): void {
  model.enqueue(
    { kind: 'toolCalls', toolCalls: [{ name: tool, arguments: { ms } }] },
    { kind: 'text', text: SURVEY_REPLY, deltaDelayMs: 400 },
  );
}

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

/** The Updates and signals in the conversation's history, by name: each one a billed Action and a Web UI row. */
export async function updatesAndSignals(conversation: Conversation): Promise<string[]> {
  const history = await conversation.handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
    const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
    return [update, signal].filter((name): name is string => typeof name === 'string');
  });
}
