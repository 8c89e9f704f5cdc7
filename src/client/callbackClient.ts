import { describeThrown } from '../contract/thrown.ts';
import type { CallbackHandler, CallbackToolResult, PendingCallback } from '../contract/types/callbacks.ts';
import type { ConversationStatus } from '../contract/types/conversation.ts';
import type { ConversationEventItem } from '../contract/types/events.ts';
import type { FollowEventsOptions, ReconnectOptions } from './conversationEvents.ts';
import { callThroughOutages } from './reachability.ts';

/** What serving callbacks needs of a conversation (a `Conversation` has it). */
export interface CallbackConversation {
  eventOffset(): Promise<number>;
  status(): Promise<ConversationStatus>;
  events(options?: FollowEventsOptions): AsyncIterable<ConversationEventItem>;
  answerCallback(callId: string, result: CallbackToolResult): Promise<void>;
}

/** Options of `Conversation.serveCallbacks`. */
export interface ServeCallbacksOptions {
  /** Stops serving; the returned promise then resolves. */
  signal?: AbortSignal;
  /** Told about a result that could not be handed back (e.g. another client answered first, or it timed out). */
  onError?: (error: Error, call: PendingCallback) => void;
  /** Serves on through Temporal outages, as `Conversation.events({ reconnect })` follows on. */
  reconnect?: ReconnectOptions;
}

/**
 * Answers the conversation's callback tool calls with `handlers` (by tool name): the calls already
 * waiting when it starts, then each one requested, until the conversation ends or `signal` aborts.
 * Calls of tools without a handler are left to other clients.
 */
export async function serveCallbacks(
  conversation: CallbackConversation,
  handlers: Record<string, CallbackHandler>,
  options: ServeCallbacksOptions = {},
): Promise<void> {
  const seen = new Set<string>();
  const running: Promise<void>[] = [];
  const serve = (call: PendingCallback): void => {
    const handler = handlers[call.toolName];
    if (!handler || seen.has(call.callId)) return;
    seen.add(call.callId);
    running.push(runHandler(conversation, handler, call, options));
  };
  // Started beside other readers, a first query can wait in the server's query buffer past the
  // start of an outage: with `reconnect`, these reads ride it out as the event follower does.
  const { signal, reconnect } = options;
  const offset = await callThroughOutages(() => conversation.eventOffset(), reconnect, signal);
  // Read after the offset: a call requested in between is seen twice and served once.
  const status = await callThroughOutages(() => conversation.status(), reconnect, signal);
  if (offset === undefined || status === undefined) return;
  for (const call of status.pendingCallbacks) serve(call);
  const events = conversation.events({
    fromOffset: offset,
    ...(signal ? { signal } : {}),
    ...(reconnect ? { reconnect } : {}),
  });
  for await (const event of events) {
    if (event.type === 'callbackRequested') serve(event.callback);
  }
  await Promise.all(running);
}

async function runHandler(
  conversation: CallbackConversation,
  handler: CallbackHandler,
  call: PendingCallback,
  options: ServeCallbacksOptions,
): Promise<void> {
  let result: CallbackToolResult;
  try {
    result = await handler(call.args, call);
  } catch (error) {
    result = { text: `${call.toolName} failed on the client: ${describeThrown(error)}`, isError: true };
  }
  try {
    await conversation.answerCallback(call.callId, result);
  } catch (error) {
    options.onError?.(error instanceof Error ? error : new Error(describeThrown(error)), call);
  }
}
