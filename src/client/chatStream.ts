import { describeThrown } from '../contract/thrown.ts';
import type { ConversationEventItem } from '../contract/types/events.ts';
import type { TurnResult } from '../contract/types/turns.ts';
import type { Conversation } from './client.ts';
import { followEvents } from './conversationEvents.ts';
import { finishReason, TurnTranslator, type UiMessageChunk } from './uiMessageChunks.ts';

/** What one response of the chat endpoint streams. */
export interface ChatStreamOptions {
  conversation: Conversation;
  /** The event offset to follow from: a turn's `turnStart`, or where a message was sent. */
  replayFrom: number;
  /** Events before this offset only rebuild the message's state: the client has their parts. */
  emitFrom: number;
  /** The transcript index the followed turn's messages start at, when known. */
  transcriptStart?: number;
  /** The turn followed: the stream ends at its `turnEnd`. */
  turn?: number;
  /** The sent message's turn result: the stream ends at the `turnEnd` of the turn that answered it. */
  answer?: Promise<TurnResult>;
  /**
   * The first turn that can answer the sent message: an earlier one answered it before (a request
   * sent again), and the stream then ends with that turn's reply.
   */
  firstNewTurn?: number;
  /** Names the message after its turn (`<conversation>-turn-<n>`), so a replay replaces it. */
  nameMessage: boolean;
  signal: AbortSignal;
}

/**
 * A turn's UI message chunks, from `start` to `finish`: replayed from the event log, then live. The
 * stream also ends, with the turn still running, when the turn waits for a person and nothing else
 * runs: the AI SDK's client sends the person's answers in the next request, which goes on from the
 * offset in the finish chunk's metadata.
 */
export async function* chatStream(
  options: ChatStreamOptions,
): AsyncGenerator<UiMessageChunk, void, undefined> {
  const { conversation, emitFrom } = options;
  const translator = new TurnTranslator(
    {
      count: async () => (await conversation.status()).messageCount,
      read: (fromIndex, limit) => conversation.messages({ fromIndex, limit }),
    },
    options.transcriptStart,
  );
  const following = new AbortController();
  const stop = (): void => following.abort();
  options.signal.addEventListener('abort', stop, { once: true });
  const events = followEvents(conversation.handle, {
    fromOffset: options.replayFrom,
    signal: following.signal,
  });
  let started = false;
  let offset = options.replayFrom;
  let answer: TurnResult | undefined;
  let answerFailed: string | undefined;
  const answered = options.answer?.then(
    (result) => {
      answer = result;
    },
    (error: unknown) => {
      answerFailed = describeThrown(error);
    },
  );
  let lastEnded: TurnResult | undefined;
  const start = (turn: number | undefined): UiMessageChunk => {
    started = true;
    const messageId =
      options.nameMessage && turn !== undefined ? `${conversation.id}-turn-${turn}` : undefined;
    return { type: 'start', ...(messageId ? { messageId } : {}) };
  };
  const finish = (): UiMessageChunk => ({
    type: 'finish',
    finishReason: translator.ended ? finishReason(translator.ended) : 'other',
    messageMetadata: { yiem: { conversationId: conversation.id, turn: translator.turn ?? 0, offset } },
  });
  try {
    let next = events.next();
    for (;;) {
      const outcome = await (answered && !answer && !answerFailed
        ? Promise.race([next, answered.then(() => 'answered' as const)])
        : next);
      if (answerFailed) {
        if (!started) yield start(translator.turn);
        yield { type: 'error', errorText: answerFailed };
        break;
      }
      if (outcome === 'answered') {
        if (answer && lastEnded && lastEnded.turn >= answer.turn) break;
        if (answer && options.firstNewTurn !== undefined && answer.turn < options.firstNewTurn) {
          translator.ended = answer;
          if (!started) yield start(answer.turn);
          yield* answeredBefore(answer);
          break;
        }
        continue;
      }
      if (outcome.done) break;
      next = events.next();
      const event: ConversationEventItem = outcome.value;
      offset = event.offset + 1;
      const chunks = await translator.translate(event);
      // A running call's live event is new to the client, whatever offset it follows.
      if ((event.live || event.offset >= emitFrom) && chunks.length > 0) {
        if (!started) yield start(translator.turn);
        yield* chunks;
      }
      if (event.type === 'turnEnd') lastEnded = event.result;
      if (done(options, event, answer)) break;
      if (event.offset + 1 >= emitFrom && (await waitsForPerson(conversation, translator))) break;
    }
  } catch (error) {
    if (!options.signal.aborted) {
      if (!started) yield start(translator.turn);
      yield { type: 'error', errorText: describeThrown(error) };
    }
  } finally {
    stop();
    options.signal.removeEventListener('abort', stop);
    void events.return(undefined).catch(() => {});
  }
  if (options.signal.aborted) return;
  if (!started) yield start(translator.turn);
  yield finish();
}

/** A turn that ended before this stream began, as its result tells it: its reply. */
function answeredBefore(result: TurnResult): UiMessageChunk[] {
  const id = `text-${result.turn}-answered`;
  const text: UiMessageChunk[] = result.reply
    ? [
        { type: 'text-start', id },
        { type: 'text-delta', id, delta: result.reply },
        { type: 'text-end', id },
      ]
    : [];
  return result.error ? [...text, { type: 'error', errorText: result.error }] : text;
}

function done(
  options: ChatStreamOptions,
  event: ConversationEventItem,
  answer: TurnResult | undefined,
): boolean {
  if (event.type !== 'turnEnd') return false;
  if (options.turn !== undefined) return event.turn >= options.turn;
  return answer !== undefined && event.turn >= answer.turn;
}

/**
 * Whether the turn now waits only for a person: approvals asked and still pending (asked of the
 * conversation, since the log may already hold their answer), every approval of the turn that waits
 * already in the stream (a batch asks several at once, one event each), none of its calls running,
 * and none shown that has yet to run (a call shown before its own events, whose start comes later).
 */
async function waitsForPerson(conversation: Conversation, translator: TurnTranslator): Promise<boolean> {
  if (translator.openApprovals.size === 0 || translator.running.size > 0 || translator.ended) return false;
  const status = await conversation.status();
  if (translator.callsToCome(status.answeredInPrepare ?? []) > 0) return false;
  const waiting = status.pendingApprovals.filter(
    (approval) => !approval.subAgent && approval.turn === translator.turn,
  );
  const pending = new Set(waiting.map((approval) => approval.approvalId));
  return (
    [...translator.openApprovals.keys()].every((approvalId) => pending.has(approvalId)) &&
    waiting.every((approval) => translator.openApprovals.has(approval.approvalId))
  );
}

/**
 * The offset of turn `turn`'s `turnStart`, looked for backwards from `before` (an offset in or after
 * the turn) in growing windows. When the log no longer holds it (trimmed), the oldest offset it
 * holds of the turn.
 */
export async function findTurnStart(
  conversation: Conversation,
  turn: number,
  before: number,
): Promise<number> {
  for (let window = 64; ; window *= 4) {
    const from = Math.max(0, before - window);
    const stop = new AbortController();
    let oldestOfTurn: number | undefined;
    let reachedStart = from === 0;
    try {
      for await (const event of followEvents(conversation.handle, {
        fromOffset: from,
        signal: stop.signal,
      })) {
        // A log trimmed past `from` starts later: there is nothing further back to look at.
        reachedStart ||= event.offset > from;
        if (event.offset >= before) break;
        if (event.type === 'turnStart' && event.turn === turn) return event.offset;
        if (event.turn === turn) oldestOfTurn ??= event.offset;
        if (event.offset + 1 >= before) break;
      }
    } finally {
      stop.abort();
    }
    if (reachedStart) return oldestOfTurn ?? before;
  }
}
