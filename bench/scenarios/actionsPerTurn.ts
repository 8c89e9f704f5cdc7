import { setTimeout as sleep } from 'node:timers/promises';
import type { Conversation } from '../../src/client/client.ts';
import {
  callbackResultUpdate,
  decideToolCallUpdate,
  forwardedDecisionSignal,
  postSignal,
  promptUpdate,
  subAgentApprovalSignal,
} from '../../src/contract/definitions.ts';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/index.ts';
import { startS3Server } from '../../test/support/s3Server.ts';
import { type ActionCounts, actionsBetween, readActions, totalActions } from '../actions.ts';
import type { BenchEnvironment } from '../environment.ts';
import { storedHistory, type TurnContent, uiRowsBesides } from '../history.ts';
import { benchReply } from '../scriptedReplies.ts';
import { noopLocalTool, noopTool } from '../tools.ts';

/** A streamed reply lasts about this long, as a real model's would: long enough to stream live. */
const STREAM_PIECE_DELAY_MS = 400;
/** A model deciding on tool calls takes a while too. */
const TOOL_DECISION_DELAY_MS = 800;
/** Issue 25's goal for a 60 s tool that reports progress (a quick run's shorter tool is held to it too). */
const LONG_TOOL_ACTIONS_GOAL = 8;
/**
 * Trailing workflow tasks (the search-attribute update after a turn) land within this, and so does
 * the server's count of a call just made (a conversation's `end()` signal was counted in the next step).
 */
const SETTLE_MS = 1_000;

/** The steps of (g) that the peer's are compared with. */
export const TEXT_TURN = 'Text turn: one model call';
export const TOOL_TURN = 'Tool turn: model, two parallel tools, model';
export const LOCAL_TOOL_TURN = 'Tool turn: model, two parallel `localActivity` tools, model';
/** The label's suffix of a step measured on a conversation started with `liveSearchAttributes: false`. */
export const WITHOUT_LIVE_SEARCH_ATTRIBUTES = ', `liveSearchAttributes: false`';
/** The label's suffix of a step measured on a conversation started with `modelPolicy: { localActivity: true }`. */
export const LOCAL_MODEL_CALLS = ', model calls local activities (`modelPolicy.localActivity`)';
/** The steps of a follower, and the label's suffix of one measured with the worker and follower on an S3 store. */
export const FOLLOWED_TOOL_TURN = 'Tool turn with `yiem chat` following';
export const ON_S3_STORE = ', both on the S3 payload store';

export interface ActionRow {
  label: string;
  /** What the design cannot do without. */
  minimum: number;
  /** Issue 25's goal for this step, where it sets one: at most this many. */
  goal?: number;
  actions: number;
  /** What the conversation's own Action meter said the step's turn used (`spend.actions` of its result). */
  metered?: number;
  byType: ActionCounts;
  /** The Web UI rows the step added besides the user's messages, approvals, activities and children. */
  uiRows?: Record<string, number>;
}

/** The user's messages, approvals and callback answers: what a turn is about in the Web UI. */
const TURN_CONTENT: TurnContent = {
  updates: new Set([promptUpdate.name, decideToolCallUpdate.name, callbackResultUpdate.name]),
  signals: new Set([postSignal.name, subAgentApprovalSignal.name, forwardedDecisionSignal.name]),
};

export interface ActionsResult {
  rows: ActionRow[];
  idleSeconds: number;
  longToolSeconds: number;
}

/**
 * `cost text` gets streamed text; `cost tools` two parallel `noop` calls, then streamed text (`cost
 * local tools`: `noopLocal`, the same tool declared `localActivity`); `cost long N` one `longTask`
 * call of N ms (it reports progress every 100 ms), then streamed text.
 */
function costReply(request: RecordedRequest): ScriptedReply {
  const messages = request.body.messages;
  const last = messages.at(-1);
  const text = { kind: 'text', text: 'It is sunny and 21 °C in Oslo right now.' } as const;
  const long = last?.role === 'user' ? /cost long (\d+)/.exec(String(last.content)) : null;
  if (long) {
    return {
      kind: 'toolCalls',
      delayMs: TOOL_DECISION_DELAY_MS,
      toolCalls: [{ name: 'longTask', arguments: { ms: Number(long[1]) } }],
    };
  }
  const tools = last?.role === 'user' ? /cost (local )?tools/.exec(String(last.content)) : null;
  if (tools) {
    const name = tools[1] ? noopLocalTool.name : noopTool.name;
    return {
      kind: 'toolCalls',
      delayMs: TOOL_DECISION_DELAY_MS,
      toolCalls: [
        { name, arguments: {} },
        { name, arguments: {} },
      ],
    };
  }
  return { ...text, deltaDelayMs: STREAM_PIECE_DELAY_MS };
}

/**
 * (g) Actions per turn, counted by the server (`action` metric) around each step, one step at a time
 * with nothing else running: a text turn, a turn with one model call, two parallel tools and a final
 * model call, both again on a conversation without live search attributes, the tool turn with
 * `localActivity` tools on both, the tool turn with a follower (what `yiem chat` runs: `events()`,
 * here on the live channel), and an idle open chat, scaled to an hour; then the followed tool turn
 * and the idle chat again with the worker and the follower on an S3 store (a real S3-compatible
 * server, its live channel a prefix of the bucket).
 */
export async function measureActionsPerTurn(
  env: BenchEnvironment,
  idleSeconds: number,
  longToolSeconds: number,
): Promise<ActionsResult> {
  const metricsUrl = env.server.metricsUrl;
  if (!metricsUrl) throw new Error('the bench server runs without metrics');
  const { worker, agents } = await env.startWorker();
  env.model.respond(costReply);
  const rows: ActionRow[] = [];
  /** Counts one step's Actions and, given the conversation, the Web UI rows it added to its history. */
  const count = async (
    label: string,
    minimum: number,
    step: () => Promise<unknown>,
    options: { goal?: number; history?: Conversation } = {},
  ) => {
    const eventsBefore = options.history
      ? ((await storedHistory(options.history.handle)).events?.length ?? 0)
      : 0;
    // What the step before it left (a trailing workflow task, the last call's metric) lands first.
    await sleep(SETTLE_MS);
    const before = await readActions(metricsUrl);
    // A step that sends a turn resolves with the Actions its result says it used.
    const metered = await step();
    await sleep(SETTLE_MS);
    const byType = actionsBetween(before, await readActions(metricsUrl));
    const uiRows = options.history
      ? uiRowsBesides(
          (await storedHistory(options.history.handle)).events?.slice(eventsBefore) ?? [],
          TURN_CONTENT,
        )
      : undefined;
    rows.push({
      label,
      minimum,
      ...(options.goal === undefined ? {} : { goal: options.goal }),
      actions: totalActions(byType),
      ...(typeof metered === 'number' ? { metered } : {}),
      byType,
      ...(uiRows ? { uiRows } : {}),
    });
    return byType;
  };
  const sendOk = async (conversation: Conversation, text: string): Promise<number | undefined> => {
    const result = await conversation.send(text);
    if (result.status !== 'completed')
      throw new Error(`turn ${result.turn}: ${result.status} ${result.error}`);
    return result.spend?.actions;
  };
  /** `yiem chat` opening on `chat`, a tool turn it follows, and the chat left open and idle. */
  const countFollowed = async (chat: Conversation, suffix: string): Promise<void> => {
    const following = new AbortController();
    let follower: Promise<void> = Promise.resolve();
    let turnsSeen = 0;
    // What `yiem chat` does when it opens: the conversation's state and where the log ends, one query;
    // then the follower's catch-up from the log, another.
    await count(`\`yiem chat\` opens (status and events queries)${suffix}`, 2, async () => {
      const { eventOffset } = await chat.statusAndOffset();
      follower = (async () => {
        for await (const event of chat.events({ fromOffset: eventOffset, signal: following.signal })) {
          if (event.type === 'turnEnd') turnsSeen += 1;
        }
      })();
    });
    await count(
      `${FOLLOWED_TOOL_TURN}${suffix}`,
      5,
      async () => {
        const metered = await sendOk(chat, 'cost tools');
        while (turnsSeen < 1) await sleep(20);
        return metered;
      },
      { goal: 7, history: chat },
    );
    const idle = await count(`Idle open chat, measured${suffix}`, 0, () => sleep(idleSeconds * 1000));
    rows.pop();
    const perHour = Object.fromEntries(
      Object.entries(idle).map(([type, value]) => [type, (value * 3600) / idleSeconds]),
    );
    rows.push({
      label: `Idle open chat, per hour${suffix}`,
      minimum: 0,
      goal: 0,
      actions: totalActions(perHour),
      byType: perHour,
    });
    following.abort();
    await follower;
  };
  try {
    let conversation: Conversation | undefined;
    await count('Conversation start', 1, async () => {
      conversation = await agents.startConversation({ systemPrompt: 'Be brief.' });
    });
    const chat = conversation as Conversation;
    // The first turn also asks the worker for its default model (one activity per conversation).
    await count('First text turn', 3, () => sendOk(chat, 'cost text'));
    await count(TEXT_TURN, 2, () => sendOk(chat, 'cost text'), { goal: 2 });
    await count(TOOL_TURN, 5, () => sendOk(chat, 'cost tools'), {
      goal: 5,
      history: chat,
    });
    // The same two turns where the conversation keeps no live search attributes.
    const quiet = await agents.startConversation({ systemPrompt: 'Be brief.', liveSearchAttributes: false });
    await sendOk(quiet, 'cost text');
    await count(`${TEXT_TURN}${WITHOUT_LIVE_SEARCH_ATTRIBUTES}`, 2, () => sendOk(quiet, 'cost text'));
    await count(`${TOOL_TURN}${WITHOUT_LIVE_SEARCH_ATTRIBUTES}`, 5, () => sendOk(quiet, 'cost tools'));
    // Local activities: the model calls, one batch of markers with the workflow task, the prompt.
    // Each conversation's first local turn also writes the patch's marker, so it is not counted.
    for (const [conversation, suffix] of [
      [chat, ''],
      [quiet, WITHOUT_LIVE_SEARCH_ATTRIBUTES],
    ] as const) {
      await sendOk(conversation, 'cost local tools');
      await count(`${LOCAL_TOOL_TURN}${suffix}`, 4, () => sendOk(conversation, 'cost local tools'), {
        history: conversation,
      });
    }
    await quiet.end();
    // Model calls as local activities: a batch of markers with the workflow task instead of an
    // activity. The run's first call is an activity, and the first local one writes the patch's marker.
    const local = await agents.startConversation({
      systemPrompt: 'Be brief.',
      modelPolicy: { localActivity: true },
    });
    await sendOk(local, 'cost text');
    await sendOk(local, 'cost text');
    await count(`${TEXT_TURN}${LOCAL_MODEL_CALLS}`, 2, () => sendOk(local, 'cost text'));
    await count(`${TOOL_TURN}${LOCAL_MODEL_CALLS}`, 5, () => sendOk(local, 'cost tools'));
    await local.end();
    // One heartbeat per heartbeat timeout (30 s) is what keeps a long tool alive.
    await count(
      `Tool turn with one ${longToolSeconds} s tool reporting progress every 100 ms`,
      4 + Math.floor(longToolSeconds / 30),
      () => sendOk(chat, `cost long ${longToolSeconds * 1000}`),
      { goal: LONG_TOOL_ACTIONS_GOAL },
    );

    await countFollowed(chat, '');
    await chat.end();
  } finally {
    env.model.respond(benchReply);
    await worker.stop();
  }
  const s3 = await startS3Server();
  const onS3 = await env.startWorker({ payloadStoreEnv: s3.env });
  env.model.respond(costReply);
  try {
    const chat = await onS3.agents.startConversation({ systemPrompt: 'Be brief.' });
    await sendOk(chat, 'cost text');
    await sendOk(chat, 'cost tools');
    await countFollowed(chat, ON_S3_STORE);
    await chat.end();
  } finally {
    env.model.respond(benchReply);
    await onS3.worker.stop();
    await s3.close();
  }
  return { rows, idleSeconds, longToolSeconds };
}
