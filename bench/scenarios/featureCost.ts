import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentClient, Conversation } from '../../src/client/client.ts';
import type { ConversationOptions } from '../../src/contract/types/conversation.ts';
import type { MessageDelivery } from '../../src/contract/types/messages.ts';
import type { TurnResult } from '../../src/contract/types/turns.ts';
import { type ActionCounts, actionsBetween, readActions, totalActions } from '../actions.ts';
import type { BenchEnvironment } from '../environment.ts';
import { encodedBytes, storedHistory } from '../history.ts';
import { callDirective } from '../scriptedReplies.ts';

/** Trailing workflow tasks (the search-attribute update after a turn) land within this. */
const SETTLE_MS = 1_000;
/** Every text turn sends a message of this size, so that rows differ by the feature only. */
const TEXT_BYTES = 400;
/** The compacting conversation's window: a compaction every few turns of {@link TEXT_BYTES}. */
const COMPACTION_WINDOW_BYTES = 3_000;
/** Turns of the compacting conversation: enough for its first compaction and a later one. */
const COMPACTION_TURNS = 16;
/** The tool a message is steered into, and when the message is sent. */
const STEER_TOOL_MS = 1_500;
const STEER_AFTER_MS = 500;

export interface FeatureCostRow {
  /** The feature and the step measured. */
  label: string;
  /** The row this one is compared with (its label). */
  against: string | null;
  actions: number;
  byType: ActionCounts;
  /** History events and bytes (encoded, as the server stores them) the step added. */
  events: number;
  bytes: number;
}

export interface FeatureCostResult {
  rows: FeatureCostRow[];
}

const BASE_TEXT = 'Text turn, one model call';
const BASE_TOOLS = 'Tool turn: model, two parallel tools, model';

function textOf(turn: number): string {
  return `turn ${turn} `.padEnd(TEXT_BYTES, 'x');
}

function completed(result: TurnResult | null): TurnResult {
  if (result?.status !== 'completed') throw new Error(`turn ended ${result?.status}: ${result?.error}`);
  return result;
}

/**
 * (k) What each control of a running agent adds to a turn: Temporal Cloud Actions (the server's
 * `action` metric) and history events and bytes, each step measured alone against the plain turn it
 * extends. One run: the counts are deterministic but for the timing of trailing workflow tasks.
 */
export async function measureFeatureCost(
  env: BenchEnvironment,
  agents: AgentClient,
): Promise<FeatureCostResult> {
  const metricsUrl = env.server.metricsUrl;
  if (!metricsUrl) throw new Error('the bench server runs without metrics');
  const rows: FeatureCostRow[] = [];
  const measure = async (
    label: string,
    against: string | null,
    conversation: Conversation,
    step: () => Promise<unknown>,
  ): Promise<FeatureCostRow> => {
    const actionsBefore = await readActions(metricsUrl);
    const historyBefore = await storedHistory(conversation.handle);
    await step();
    await sleep(SETTLE_MS);
    const byType = actionsBetween(actionsBefore, await readActions(metricsUrl));
    const historyAfter = await storedHistory(conversation.handle);
    const row = {
      label,
      against,
      actions: totalActions(byType),
      byType,
      events: (historyAfter.events?.length ?? 0) - (historyBefore.events?.length ?? 0),
      bytes: encodedBytes(historyAfter) - encodedBytes(historyBefore),
    };
    rows.push(row);
    return row;
  };
  const start = async (options: Omit<ConversationOptions, 'systemPrompt'> = {}) => {
    const conversation = await agents.startConversation({ systemPrompt: '', ...options });
    // The first text and tool turns ask the worker for its default model and write patch markers:
    // not a turn's cost. Their trailing workflow tasks settle before anything is measured.
    completed(await conversation.send(textOf(0)));
    completed(await conversation.send(callDirective('noop', 1)));
    await sleep(SETTLE_MS);
    return conversation;
  };

  const plain = await start();
  await measure(BASE_TEXT, null, plain, async () => completed(await plain.send(textOf(1))));
  await measure(BASE_TOOLS, null, plain, async () => completed(await plain.send(callDirective('noop', 2))));

  const budgeted = await start({
    budget: { conversation: { modelCalls: 10_000, cost: 1_000 }, turn: { modelCalls: 50, toolCalls: 50 } },
  });
  await measure('Text turn under a budget (conversation and turn limits)', BASE_TEXT, budgeted, async () =>
    completed(await budgeted.send(textOf(1))),
  );
  await measure('Tool turn under a budget', BASE_TOOLS, budgeted, async () =>
    completed(await budgeted.send(callDirective('noop', 2))),
  );

  await measure('Tool turn: two parallel at-most-once tools', BASE_TOOLS, plain, async () =>
    completed(await plain.send(callDirective('noopOnce', 2))),
  );

  const limited = await start({ budget: { turn: { modelCalls: 50 } } });
  await limited.raiseBudget({ turn: { modelCalls: 1 } });
  await measure('Tool turn stopped at its budget, raised and resumed', BASE_TOOLS, limited, async () => {
    const stopped = await limited.send(callDirective('noop', 2));
    if (stopped.status !== 'budgetExhausted')
      throw new Error(`expected budgetExhausted, got ${stopped.status}`);
    await limited.raiseBudget({ turn: { modelCalls: null } });
    completed(await limited.resume());
  });

  const compacting = await start({
    compaction: { maxContextBytes: COMPACTION_WINDOW_BYTES, keepRecentTurns: 2 },
  });
  let compactions = 0;
  let seenAfter = false;
  for (let turn = 1; turn <= COMPACTION_TURNS; turn++) {
    const row = await measure(`compacting turn ${turn}`, BASE_TEXT, compacting, async () =>
      completed(await compacting.send(textOf(turn))),
    );
    rows.pop();
    const now = (await compacting.compactions()).length;
    const compacted = now > compactions;
    compactions = now;
    if (compacted && now === 1)
      rows.push({ ...row, label: "Text turn with the conversation's first compaction" });
    else if (compacted && now === 2) rows.push({ ...row, label: 'Text turn with a later compaction' });
    else if (!compacted && now >= 1 && !seenAfter) {
      seenAfter = true;
      rows.push({ ...row, label: 'Text turn after a compaction (summary in the prompt)' });
    }
    if (now >= 2 && seenAfter) break;
  }

  // A message sent 0.5 s into a 1.5 s tool, by each delivery, against the same turn without it.
  const steered = await start();
  const waitTurn = callDirective('wait', 1, { ms: STEER_TOOL_MS });
  const withMessage = async (delivery: MessageDelivery) => {
    const turn = steered.send(waitTurn);
    await sleep(STEER_AFTER_MS);
    const answer = steered.send(textOf(2), { delivery });
    completed(await turn);
    completed(await answer);
  };
  const BASE_WAIT = `Tool turn: one ${STEER_TOOL_MS / 1000} s tool`;
  const BASE_WAIT_THEN_TEXT = `${BASE_WAIT}, then a text turn`;
  await measure(BASE_WAIT, null, steered, async () => completed(await steered.send(waitTurn)));
  await measure(BASE_WAIT_THEN_TEXT, null, steered, async () => {
    completed(await steered.send(waitTurn));
    completed(await steered.send(textOf(1)));
  });
  await measure('The tool turn with a message steered into it', BASE_WAIT, steered, () =>
    withMessage('steer'),
  );
  await measure('The tool turn with a follow-up sent during it', BASE_WAIT_THEN_TEXT, steered, () =>
    withMessage('followUp'),
  );
  await measure('The tool turn interrupted by a message', BASE_WAIT, steered, () => withMessage('interrupt'));

  for (const conversation of [plain, budgeted, limited, compacting, steered]) await conversation.end();
  return { rows };
}
