import { ApplicationFailure, CancellationScope, isCancellation, patched } from '@temporalio/workflow';
import { cancelledTurn, workerLostText } from '../src/contract/messages.ts';
import {
  type AgentActivities,
  type CallModelInput,
  type CallModelOutput,
  MODEL_CONTEXT_NOT_CACHED,
  type PreparedToolCall,
} from '../src/contract/protocol.ts';
import { withDefaultPolicy } from '../src/contract/toolPolicy.ts';
import { resultText } from '../src/contract/toolResult.ts';
import {
  largeInlineMessages,
  storedOutline,
  type TranscriptEntry,
  type TranscriptTail,
  transcriptTail,
} from '../src/contract/transcript.ts';
import { runObservedTurn } from '../src/contract/turnObservers.ts';
import type { AssistantMessage } from '../src/contract/types/messages.ts';
import type { TurnResult } from '../src/contract/types/turns.ts';
import { countRetries, meteredActivities, meteredLocalActivities } from './actionMeter.ts';
import { activityFailureCause, failureMessage, workerLost } from './activityFailure.ts';
import { compactIfDue } from './compaction.ts';
import { showCurrentDetails } from './currentDetails.ts';
import { answerMessages, drainMessages } from './delivery.ts';
import { feedModelContext } from './eventSink.ts';
import { checkReply, checkToolResults, checkUserMessages } from './guardrails.ts';
import { afterModelCall, beforeModelCall, beforeToolBatch, turnEnded } from './safePoint.ts';
import { type ConversationState, recordTurnStart } from './state.ts';
import { runToolBatch } from './toolBatch.ts';
import { modelCallQueue, routedModel, workerDefaultModel, workerModelRouting } from './workerActivities.ts';

/** Since this patch a run asks its worker for its models once, and calls may go to a rate-limited model's queue. */
const MODEL_ROUTING_PATCH = 'yiem-model-routing';

/**
 * Runs the next turn in its own cancellation scope (the one the `cancel` Update cancels) and hands
 * its result to the `prompt`s of the messages it answered.
 */
export async function runTurn(state: ConversationState): Promise<void> {
  state.turn += 1;
  state.turnsThisRun += 1;
  recordTurnStart(state);
  const { events, turn } = state;
  // Followers let go for a new run that a prompt then put off: they follow this turn here.
  if (events.detached) events.reattachFollowers();
  state.updateSearchAttributes('running', turn);
  const scope = new CancellationScope();
  state.running = scope;
  showCurrentDetails(state);
  state.turnModel = undefined;
  state.turnGivenUp = [];
  if (patched(MODEL_ROUTING_PATCH)) {
    state.modelRouting ??= await workerModelRouting();
    state.workerModel = state.modelRouting.defaultModel;
  } else {
    state.workerModel ??= await workerDefaultModel(state.settings);
  }
  events.publish(turn, { type: 'turnStart' });
  const answered: number[] = [];
  // Observers (the tracing's turn span) wrap the loop; without tracing there are none.
  const observed = {
    conversationId: state.conversationId,
    turn,
    agentName: state.agent?.name,
    spent: () => state.control.turnSpend,
  };
  const result = await scope.run(() => runObservedTurn(observed, () => agentLoop(state, answered)));
  state.running = undefined;
  showCurrentDetails(state);
  state.control.stopClock(turn);
  // Upserted before the turn's spend is read, so the turn's Actions include its last upsert.
  state.updateSearchAttributes('idle', turn);
  const spend = turnEnded(state, result);
  const givenUp = state.turnGivenUp.length > 0 ? { givenUp: [...state.turnGivenUp] } : {};
  const ended: TurnResult = { ...result, ...givenUp, spend: spend.turn };
  state.lastTurn = ended;
  events.publish(turn, { type: 'turnEnd', result: ended, spend });
  events.trim();
  answerMessages(state, answered, ended);
}

/**
 * One turn of the agent loop (the seed's `_process_message`): drain pending messages (their ids go
 * to `answered`; follow-ups sent meanwhile wait for the next turn), call the model, run its tool
 * calls, and repeat until the model answers without tools, a tool terminates the batch, the model
 * call limit is reached, a guardrail trips, or the model call fails for good.
 */
async function agentLoop(state: ConversationState, answered: number[]): Promise<TurnResult> {
  const { turn, settings, messages } = state;
  const activityIds = new Set<string>();
  let interruptedCalls = 0;
  for (let modelCalls = 0; ; modelCalls++) {
    // The turn owns the messages it was started for, even when it is cancelled before its first
    // model call (during the default-model lookup, say): their prompts get the cancelled result.
    // Messages that arrive during a turn that is then cancelled wait for the next turn.
    const cancelled = CancellationScope.current().consideredCancelled;
    if (cancelled && modelCalls > 0) return cancelledTurn(turn);
    answered.push(...drainMessages(state, modelCalls, interruptedCalls));
    if (cancelled) return cancelledTurn(turn);
    if (modelCalls >= settings.maxModelCallsPerTurn) {
      return {
        turn,
        status: 'limitReached',
        reply: '',
        error: `Stopped after ${settings.maxModelCallsPerTurn} model calls in one turn without a final answer. Send another message to let the agent continue.`,
      };
    }
    const stopped = await beforeModelCall(state, answered, modelCalls);
    if (stopped) return stopped;
    const refused = await checkUserMessages(state);
    if (refused) return refused;
    let assistant: AssistantMessage;
    let kept: TranscriptEntry;
    let prepared: PreparedToolCall[];
    const { agent } = state;
    await compactIfDue(state);
    try {
      const model = await chooseModel(state);
      const storeIndices = largeInlineMessages(messages);
      const { tail, fed } = contextTail(state);
      state.lastCallMessageCount = messages.length;
      const {
        events,
        prepared: preparedInCall,
        stored,
        storedMessages,
        contextWindow,
        ...reply
      } = await callModel(state, fed, {
        conversationId: state.conversationId,
        turn,
        messageCount: messages.length,
        transcriptId: state.transcriptId,
        ...(storeIndices.length > 0 ? { storeIndices } : {}),
        ...(tail ? { tail } : {}),
        ...(model ? { model } : {}),
        followed: state.events.followed,
        eventOffset: state.events.offset,
        ...(agent ? { agent } : {}),
        ...offeredTools(state),
        ...state.compaction.modelCallInput(),
      });
      state.compaction.noteWindow(contextWindow);
      if (events) state.events.publishFromResult(events, { messageText: reply.content });
      for (const { index, stored: reference } of storedMessages ?? []) {
        const message = messages[index];
        if (message) messages[index] = storedOutline(message, reference);
      }
      assistant = reply;
      kept = stored ? storedOutline(reply, stored) : reply;
      prepared = (preparedInCall ?? []).map(withDefaultPolicy);
    } catch (error) {
      if (isCancellation(error)) return cancelledTurn(turn);
      return { turn, status: 'failed', reply: '', error: modelCallFailure(state, error) };
    }
    if (assistant.toolCalls.length === 0) {
      const reply = await checkReply(state, kept);
      messages.push(...reply.entries);
      afterModelCall(state, assistant);
      if (reply.ended) return reply.ended;
      const [final] = reply.entries;
      const rewritten = final?.guardrail?.rewrittenBy ? { content: final.content } : {};
      return finalReply(turn, { ...assistant, ...rewritten });
    }
    messages.push(kept);
    afterModelCall(state, assistant);

    const held = await beforeToolBatch(state, prepared, answered);
    if (held) return held;
    const batch = await runToolBatch(state, prepared, activityIds);
    const results = await checkToolResults(state, batch.results);
    messages.push(...results.entries);
    interruptedCalls = batch.interruptedCalls;
    if (batch.cancelled) return cancelledTurn(turn);
    if (results.ended) return results.ended;
    if (batch.terminate) {
      return {
        turn,
        status: 'terminated',
        reply: results.entries.map((result) => resultText(result.content)).join('\n'),
      };
    }
  }
}

/** A reply the model cut off at its output limit is reported, never passed off as a whole answer. */
function finalReply(turn: number, assistant: AssistantMessage): TurnResult {
  if (assistant.stopReason !== 'length') return { turn, status: 'completed', reply: assistant.content };
  if (assistant.content === '') {
    return {
      turn,
      status: 'failed',
      reply: '',
      error:
        'The model reached its output limit before writing any reply (finish_reason "length"). Send another message to try again, or raise the model\'s output token limit.',
    };
  }
  return {
    turn,
    status: 'completed',
    reply: assistant.content,
    error: 'The reply was cut off at the model\'s output token limit (finish_reason "length").',
  };
}

/** Since this patch a conversation with `modelPolicy.localActivity` runs model calls as local activities. */
const LOCAL_MODEL_CALLS_PATCH = 'yiem-local-model-calls';

/**
 * The model call, which also runs PREPARE of the reply's tool calls (activities/model.ts): named in
 * the Web UI by agent, model and turn. With `modelPolicy.localActivity` a call nobody follows, on the
 * conversation's own queue, whose context tail went to the worker's cache (`fed`, or in its input
 * before patch `yiem-context-sink`), runs as a local activity; when that worker lacks the context
 * after all, the call runs again as an activity, which can ask.
 */
async function callModel(
  state: ConversationState,
  fed: boolean,
  input: CallModelInput,
): Promise<CallModelOutput> {
  const { modelPolicy } = state.settings;
  const agent = input.agent ? `agent ${input.agent.name} · ` : '';
  const summary = `${agent}model ${input.model ?? state.workerModel ?? '(worker default)'} · turn ${state.turn}`;
  const startToCloseTimeout = modelPolicy.startToCloseTimeout ?? '2 minutes';
  const queue = modelCallQueue(state.modelRouting, input.model, state.conversationId);
  const local =
    modelPolicy.localActivity === true &&
    input.followed === false &&
    (fed || input.tail !== undefined) &&
    queue.taskQueue === undefined &&
    patched(LOCAL_MODEL_CALLS_PATCH);
  if (local) {
    const callKey = `model-${state.turn}-${input.messageCount}`;
    const maximumAttempts = modelPolicy.retry?.maximumAttempts ?? 0;
    try {
      return await meteredLocalActivities<AgentActivities>({
        summary,
        startToCloseTimeout,
        ...(modelPolicy.retry ? { retry: modelPolicy.retry } : {}),
      }).callModel({ ...input, local: { callKey, maximumAttempts } });
    } catch (error) {
      if (!contextNotCached(error)) throw error;
    }
  }
  const output = await meteredActivities<AgentActivities>({
    ...queue,
    startToCloseTimeout,
    ...(modelPolicy.heartbeatTimeout ? { heartbeatTimeout: modelPolicy.heartbeatTimeout } : {}),
    ...(modelPolicy.retry ? { retry: modelPolicy.retry } : {}),
    summary,
  }).callModel(input);
  countRetries(output.events);
  return output;
}

/** Whether a local model call failed because its worker lacked the conversation's context. */
function contextNotCached(error: unknown): boolean {
  const failure = activityFailureCause(error);
  return failure instanceof ApplicationFailure && failure.type === MODEL_CONTEXT_NOT_CACHED;
}

/**
 * The next model call's model. Before patch `yiem-model-routing`: the agent's, else the
 * conversation's model (absent: the worker's default). Since: the prompt's, the agent's, the
 * conversation's, else the worker's default, then the worker's `route` when it has one.
 */
async function chooseModel(state: ConversationState): Promise<string | undefined> {
  const { agent, settings, modelRouting } = state;
  if (!modelRouting) return agent?.model ?? settings.model;
  const requested = state.turnModel ?? agent?.model ?? settings.model ?? modelRouting.defaultModel;
  if (!modelRouting.routed) return requested;
  return routedModel({
    conversationId: state.conversationId,
    turn: state.turn,
    requested,
    ...(agent ? { agent: agent.name } : {}),
    messageCount: state.messages.length,
  });
}

/** Gives model calls the small entries added since the previous one (CallModelInput.tail). */
const CONTEXT_TAIL_PATCH = 'yiem-context-tail';

/**
 * Since this patch those entries go to the worker's context cache by the `yiemModelContext` sink, not
 * in the call's input: each is then recorded in history once, where it entered the conversation.
 */
const CONTEXT_SINK_PATCH = 'yiem-context-sink';

/**
 * The entries since the previous model call, when small, so that its worker needs no context query:
 * handed to the worker's cache (`fed`), or before patch `yiem-context-sink` carried in the call's input.
 */
function contextTail(state: ConversationState): { tail?: TranscriptTail; fed: boolean } {
  // Asked from the run's first model call on: the patches' markers and `TemporalChangeVersion`
  // upserts come with the first turn, and the turns after it query nothing.
  if (!patched(CONTEXT_TAIL_PATCH)) return { fed: false };
  const bySink = patched(CONTEXT_SINK_PATCH);
  if (state.lastCallMessageCount === undefined) return { fed: false };
  const tail = transcriptTail(state.messages, state.lastCallMessageCount);
  if (!tail) return { fed: false };
  if (!bySink) return { tail, fed: false };
  feedModelContext(state.transcriptId, tail);
  return { fed: true };
}

/** The tools the model was offered: the active agent's, else the conversation's (absent: all). */
function offeredTools(state: ConversationState): { tools?: string[] } {
  const { agent } = state;
  const tools = agent ? (agent.tools ?? []) : state.settings.tools;
  return tools ? { tools } : {};
}

/**
 * Since this patch a model call whose attempts ran out on lost workers says so in words; before it
 * the turn's error read `The model call failed: timed out (HEARTBEAT)`.
 */
const MODEL_WORKER_LOST_PATCH = 'yiem-model-worker-lost';

/** The turn's error when its model call failed for good. */
function modelCallFailure(state: ConversationState, error: unknown): string {
  if (workerLost(error) && patched(MODEL_WORKER_LOST_PATCH)) {
    const { retry, heartbeatTimeout } = state.settings.modelPolicy;
    return workerLostText('The model call', retry?.maximumAttempts ?? 0, heartbeatTimeout ?? '30 seconds');
  }
  return `The model call failed: ${failureMessage(error)}`;
}
