import type { ConversationListing } from '../client/client.ts';
import type { ServerRecord } from '../client/serverRecord.ts';
import { exhaustionMessage, formatSpend } from '../contract/budget.ts';
import { CLI_RESULT_LINE_CHARS } from '../contract/limits.ts';
import { resultText } from '../contract/toolResult.ts';
import { firstLine } from '../contract/truncate.ts';
import type { Compaction } from '../contract/types/compaction.ts';
import type { ConversationStatus } from '../contract/types/conversation.ts';
import type { AgentEvent } from '../contract/types/events.ts';
import type { Message } from '../contract/types/messages.ts';
import type { TurnResult } from '../contract/types/turns.ts';
import { actionPricePerMillion } from './config.ts';

/** A transcript as a person reads it. */
export function formatTranscript(messages: readonly Message[]): string {
  return messages.map(formatMessage).join('\n');
}

/** A compaction as `/compact` and `yiem compact` show it: which messages it summarised, and the summary. */
export function formatCompaction(compaction: Compaction | null): string {
  if (!compaction)
    return 'Nothing to compact: the conversation has no turns older than the ones it keeps whole.';
  const asked = compaction.trigger === 'request' ? 'asked for' : 'the window was full';
  return [
    `Compaction ${compaction.id} (${asked}, turn ${compaction.turn}, ${compaction.model}): messages ${compaction.from + 1}–${compaction.upTo} folded into the summary; the model now sees it and the messages from ${compaction.upTo + 1} on.`,
    compaction.summary,
  ].join('\n');
}

function formatMessage(message: Message): string {
  switch (message.role) {
    case 'user':
      return `you> ${message.content}`;
    case 'assistant': {
      const calls = message.toolCalls.map((call) => `  → ${call.name}(${JSON.stringify(call.arguments)})`);
      return [message.content === '' ? undefined : `agent> ${message.content}`, ...calls]
        .filter((line) => line !== undefined)
        .join('\n');
    }
    case 'toolResult':
      return `  ${message.isError ? '✗' : '✓'} ${message.toolName}: ${firstLine(resultText(message.content), CLI_RESULT_LINE_CHARS)}`;
  }
}

/** What a turn's result says to the person who sent the message. */
/** What a turn spent, from its result (runs from before the meter report none). */
export function formatTurnSpend(result: TurnResult): string | undefined {
  return result.spend ? `turn spent: ${formatSpend(result.spend, actionPricePerMillion())}` : undefined;
}

export function formatTurnResult(result: TurnResult): string {
  if (result.status === 'completed' || result.status === 'terminated') return `agent> ${result.reply}`;
  return `agent! ${result.error ?? result.status}`;
}

/** One line per tool event, for a worker running in the same process as the chat. */
export function formatToolEvent(event: AgentEvent): string {
  switch (event.type) {
    case 'toolExecutionStart':
      return `  ⚙ ${event.toolName}(${JSON.stringify(event.args)})`;
    case 'toolExecutionUpdate':
      return `  … ${event.toolName}: ${JSON.stringify(event.partialResult)}`;
    case 'toolExecutionEnd':
      return `  ${event.isError ? '✗' : '✓'} ${event.toolName}: ${firstLine(resultText(event.result.content), CLI_RESULT_LINE_CHARS)}`;
  }
}

/** One line per conversation: id, status, turns, agent, start time. */
export function formatListing(rows: readonly ConversationListing[]): string {
  if (rows.length === 0) return 'No conversations.';
  return rows
    .map((row) =>
      [
        row.id,
        row.status ?? row.executionStatus.toLowerCase(),
        `${row.turns ?? 0} turns`,
        row.agent ?? '-',
        row.startTime.toISOString(),
      ].join('  '),
    )
    .join('\n');
}

/** A conversation no worker answered for, as the server keeps it (`yiem status` without a worker). */
export function formatServerRecord(record: ServerRecord): string {
  const status = record.status ?? record.executionStatus.toLowerCase();
  const turns = record.turns === undefined ? '' : `  ${record.turns} turns`;
  const cost = record.cost === undefined ? '' : `  cost ${record.cost}`;
  const approvals = record.pendingApprovals.map(
    (approval) =>
      `  awaiting approval: ${approval.call}${approval.approvalId ? `   |   yiem approve ${record.conversationId} ${approval.approvalId}` : ''} (decided once a worker runs)`,
  );
  return [
    `${record.conversationId}  ${status}${turns}${cost}  (from the server's records)`,
    ...approvals,
    `  ${record.noWorker}: start a worker on "${record.taskQueue}" for its transcript, approvals and messages`,
  ].join('\n');
}

/** A conversation's state and what waits in it, with the commands that answer its approvals. */
export function formatStatus(id: string, status: ConversationStatus): string {
  const lines = [
    `${id}  ${status.state}  turn ${status.turn}  ${status.messageCount} messages${status.agent ? `  agent ${status.agent}` : ''}`,
  ];
  // Runs from before budgets have no spend to show.
  if (status.spend) lines.push(`  spent: ${formatSpend(status.spend.conversation, actionPricePerMillion())}`);
  if (status.pause && status.stop?.reason !== 'paused') {
    lines.push(
      `  paused (new prompts ${status.pause.prompts === 'refuse' ? 'refused' : 'wait'})${status.state === 'running' ? ': the turn stops at its next safe point' : ''}   |   yiem resume ${id}`,
    );
  }
  if (status.stop?.reason === 'paused')
    lines.push(`  turn ${status.turn} paused at a safe point   |   yiem resume ${id}`);
  if (status.stop?.reason === 'budgetExhausted') {
    lines.push(
      `  ${exhaustionMessage(status.stop.exhausted)}`,
      `    yiem budget ${id} --${status.stop.exhausted.scope} ${status.stop.exhausted.limit}=… --resume   |   yiem cancel ${id}`,
    );
  }
  for (const approval of status.pendingApprovals) {
    const asker = approval.subAgent
      ? ` (asked by sub-agent ${approval.subAgent.agent}, ${approval.subAgent.conversationId})`
      : '';
    lines.push(
      `  approval ${approval.approvalId}: ${approval.toolName}(${JSON.stringify(approval.args)})${asker}: ${approval.reason}`,
      `    yiem approve ${id} ${approval.approvalId}   |   yiem deny ${id} ${approval.approvalId}`,
    );
  }
  for (const callback of status.pendingCallbacks) {
    lines.push(`  callback ${callback.callId}: ${callback.toolName} waits for a client to run it`);
  }
  return lines.join('\n');
}
