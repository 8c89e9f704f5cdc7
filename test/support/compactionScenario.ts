import type { WorkflowHandle } from '@temporalio/client';
import { expect } from 'vitest';
import { DEFAULT_COMPACTION_PROMPT } from '../../src/contract/compaction.ts';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/index.ts';
import type { TestAgent } from './agentHarness.ts';
import { scheduledActivities } from './history.ts';

/** A turn here (a short question, its answer) is about 225 bytes of message JSON: some 13 turns a window. */
export const WINDOW_BYTES = 3_000;

export const systemText = (request: RecordedRequest | undefined): string =>
  String(request?.body.messages[0]?.content ?? '');
export const isCompaction = (request: RecordedRequest): boolean =>
  systemText(request) === DEFAULT_COMPACTION_PROMPT;

/**
 * The scripted model tells a compaction's call by its system prompt (the compaction prompt) and
 * answers it with a summary naming the last question it was given: `summary through q<n>`.
 */
export function answer(request: RecordedRequest): ScriptedReply {
  if (isCompaction(request)) {
    const given = String(request.body.messages[1]?.content ?? '');
    const questions = [...given.matchAll(/^user: (q\d+)$/gm)].map((match) => match[1]);
    return { kind: 'text', text: `summary through ${questions.at(-1)}` };
  }
  const question = String(request.body.messages.at(-1)?.content ?? '');
  return { kind: 'text', text: question.replace('q', 'a') };
}

/**
 * A conversation of `turns` short turns on an agent whose window is `WINDOW_BYTES` and whose model
 * answers with {@link answer}: compacted again and again, with the transcript whole and the model
 * shown the latest summary and the turns after it.
 */
export async function compactedConversation(agent: TestAgent, turns: number): Promise<void> {
  const conversation = await agent.client.startConversation({ systemPrompt: 'Remember.' });
  for (let turn = 1; turn <= turns; turn++) {
    expect(await conversation.send(`q${turn}`)).toMatchObject({ status: 'completed', reply: `a${turn}` });
  }

  const messages = await conversation.messages();
  expect(messages).toHaveLength(2 * turns);
  expect(messages.map((message) => message.content)).toEqual(
    Array.from({ length: turns }, (_, index) => [`q${index + 1}`, `a${index + 1}`]).flat(),
  );

  const compactions = await conversation.compactions();
  const latest = compactions.at(-1);
  if (!latest) throw new Error('no compaction');
  // The first after some 13 turns, then one every 10 or so.
  expect(latest.id).toBeGreaterThanOrEqual(Math.floor(turns / 15));
  for (const [index, compaction] of compactions.entries()) {
    expect(compaction).toMatchObject({ trigger: 'window', model: 'scripted' });
    // Each summarised what the one before it did not, up to a question.
    if (index > 0) expect(compaction.from).toBe(compactions[index - 1]?.upTo);
    expect(messages[compaction.upTo]?.role).toBe('user');
    expect(compaction.summary).toBe(`summary through ${messages[compaction.upTo - 2]?.content}`);
  }

  // The last model call: the system prompt with the latest summary, then the messages after it.
  const requests = agent.model.requests.filter((request) => !isCompaction(request));
  const sent = requests.at(-1)?.body.messages ?? [];
  expect(systemText(requests.at(-1))).toContain(`Remember.\n\n[The ${latest.upTo} earliest messages`);
  expect(systemText(requests.at(-1))).toContain(`<summary>\n${latest.summary}\n</summary>`);
  expect(sent.slice(1).map((message) => message.content)).toEqual(
    messages.slice(latest.upTo, -1).map((message) => message.content),
  );
  expect(JSON.stringify(sent).length).toBeLessThan(WINDOW_BYTES);

  // Each compaction folded the previous summary in: its call was given that summary.
  const compactionCalls = agent.model.requests.filter(isCompaction);
  expect(compactionCalls).toHaveLength(latest.id);
  expect(String(compactionCalls.at(-1)?.body.messages[1]?.content)).toContain(
    `The summary of the conversation so far:\n${compactions.at(-2)?.summary}`,
  );

  // In the Web UI: an activity of its own, named by the messages it summarised, in the latest run
  // that compacted (a run continued as new after its last compaction has none).
  const row = await latestCompactionRow(conversation.handle);
  const named = /^compact messages (\d+)–(\d+) · model scripted · turn \d+$/.exec(row ?? '');
  expect(named, `the compactContext row "${row}"`).not.toBeNull();
  expect(compactions.map((compaction) => `${compaction.from + 1}–${compaction.upTo}`)).toContain(
    `${named?.[1]}–${named?.[2]}`,
  );
}

/** The Web UI summary of the latest `compactContext` activity, walking back run by run. */
async function latestCompactionRow(latestRun: WorkflowHandle): Promise<string | undefined> {
  let handle = latestRun;
  for (;;) {
    const rows = (await scheduledActivities(handle)).filter((activity) => activity.type === 'compactContext');
    if (rows.length > 0) return rows.at(-1)?.summary;
    const [started] = (await handle.fetchHistory()).events ?? [];
    const previous = started?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!previous) return undefined;
    handle = handle.client.getHandle(handle.workflowId, previous);
  }
}
