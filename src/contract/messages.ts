import { textContent } from './toolResult.ts';
import type { ToolResultMessage } from './types/messages.ts';
import type { AgentToolResult } from './types/tools.ts';
import type { TurnResult } from './types/turns.ts';

/**
 * A tool result message. Pure, so the workflow can build one too when a tool's activity fails for
 * good.
 */
export function toolResultMessage(
  toolCallId: string,
  toolName: string,
  result: Pick<AgentToolResult, 'content' | 'details'>,
  isError: boolean,
): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId,
    toolName,
    content: result.content,
    details: result.details,
    isError,
    timestamp: Date.now(),
  };
}

/** An error result whose text the model reads and can act on. */
export function toolErrorMessage(toolCallId: string, toolName: string, text: string): ToolResultMessage {
  return toolResultMessage(toolCallId, toolName, { content: [textContent(text)], details: {} }, true);
}

/** The result a call gets when its turn is cancelled before it finished: the model must see one. */
export function toolCancelledMessage(toolCallId: string, toolName: string): ToolResultMessage {
  return toolErrorMessage(toolCallId, toolName, cancelledText(toolName));
}

/** Whether `message` is the result `toolCancelledMessage` gives. */
export function isCancelledResult(message: ToolResultMessage): boolean {
  return (
    message.isError &&
    message.content.length === 1 &&
    message.content[0]?.text === cancelledText(message.toolName)
  );
}

function cancelledText(toolName: string): string {
  return `Tool "${toolName}" was cancelled before it finished.`;
}

/**
 * Why a call whose last attempt ended with its worker gone (no heartbeat within `heartbeatTimeout`:
 * the process died, was killed or hung) failed with no attempts left: a call that crashes its worker
 * each time is not retried for ever, and the model and the user read why.
 */
export function workerLostText(call: string, attempts: number, heartbeatTimeout: string): string {
  return `${call} failed for good: the worker running it died or stopped answering (no heartbeat for ${heartbeatTimeout}) on its last attempt, and all ${attempts} attempts are used up. It is not tried again; a call that crashes its worker each time needs fixing.`;
}

/**
 * Why a call is given up after its worker died `deaths` times (`what`: "this tool", "this model
 * call"), before its retry policy's attempts are used up: each attempt that ended with the worker
 * gone counts, a thrown error does not.
 */
export function workerDeathsText(what: string, deaths: number): string {
  return `the worker died ${deaths} times running ${what} (killed, out of memory or crashed), so it is not tried again; a call that crashes its worker each time needs fixing`;
}

/** The result of a tool call whose attempts ran out on lost workers ({@link workerLostText}). */
export function toolWorkerLostMessage(
  toolCallId: string,
  toolName: string,
  attempts: number,
  heartbeatTimeout: string,
): ToolResultMessage {
  return toolErrorMessage(
    toolCallId,
    toolName,
    workerLostText(`Tool "${toolName}"`, attempts, heartbeatTimeout),
  );
}

/**
 * The result a call gets when its tool finished but its result could not be put into the payload
 * store (`storeError` names the store and why): the model must not think the tool did nothing, and
 * it was not run again.
 */
export function toolResultNotKeptMessage(
  toolCallId: string,
  toolName: string,
  storeError: string,
): ToolResultMessage {
  return toolErrorMessage(
    toolCallId,
    toolName,
    `Tool "${toolName}" finished, but its result was lost: ${storeError}. It was not run again.`,
  );
}

/**
 * The result a call gets when a message sent with delivery `'interrupt'` cancelled its batch before
 * it finished: the model must see one, and why.
 */
export function toolInterruptedMessage(toolCallId: string, toolName: string): ToolResultMessage {
  return toolErrorMessage(
    toolCallId,
    toolName,
    `Tool "${toolName}" was interrupted by a new message before it finished; the message follows.`,
  );
}

/**
 * What the model reads of an at-most-once call whose interrupted attempt nobody could account for
 * (`ActivityTool.atMostOnce`). `why` says what is known: the interruption, what `reconcile` said.
 * The activity and the workflow (a call whose activity failed for good) both build it here.
 */
export function toolOutcomeUnknownMessage(
  toolCallId: string,
  toolName: string,
  why: string,
  attempt?: number,
): ToolResultMessage {
  const text = `Tool "${toolName}" outcome unknown: the call may or may not have taken effect; ${why}. It was not run again, since it must not take effect twice; check before calling it again.`;
  return toolResultMessage(
    toolCallId,
    toolName,
    { content: [textContent(text)], details: { outcome: 'unknown', ...(attempt ? { attempt } : {}) } },
    true,
  );
}

/** The result of a turn that was cancelled (`Conversation.cancel`). */
export function cancelledTurn(turn: number): TurnResult {
  return { turn, status: 'cancelled', reply: '', error: 'The turn was cancelled.' };
}
