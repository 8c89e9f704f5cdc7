import { getToolName, isToolUIPart, type UIMessage } from 'ai';
import { useState } from 'react';
import type { ConsoleConversation } from '../client/consoleApi.ts';
import type { ChatMessageMetadata, ChatToolOutput } from '../client/uiMessageChunks.ts';
import { formatJson } from './format.ts';

type Places = Pick<ConsoleConversation, 'calls' | 'subAgents'>;
type ToolPart = Extract<UIMessage['parts'][number], { toolCallId: string }>;

/** The turn an assistant message shows: named after it by the chat endpoint, or in its metadata. */
function messageTurn(message: UIMessage): number | undefined {
  const named = /-turn-(\d+)$/.exec(message.id);
  if (named) return Number(named[1]);
  return (message.metadata as ChatMessageMetadata | undefined)?.yiem?.turn;
}

export function MessageView({
  message,
  conversationId,
  places,
  onApproval,
}: {
  message: UIMessage;
  conversationId: string;
  places: Places | undefined;
  onApproval: (approvalId: string, approved: boolean, reason?: string) => void;
}) {
  const turn = messageTurn(message);
  return (
    <li className={`message ${message.role}`} data-role={message.role}>
      {message.parts.map((part, index) => {
        const key = `${message.id}-${index}`;
        if (part.type === 'text') {
          return (
            <p key={key} className="text">
              {part.text}
            </p>
          );
        }
        if (!isToolUIPart(part)) return null;
        return (
          <ToolCall
            key={key}
            part={part}
            links={callLinks(conversationId, turn, part, places)}
            onApproval={onApproval}
          />
        );
      })}
    </li>
  );
}

interface CallLinks {
  webUi?: string;
  subAgent?: { id: string; webUi: string | null };
}

/**
 * A call's activity in the Web UI (`tool-<turn>-<call id>`, the id the workflow gives it) and, for
 * an agent tool, the sub-agent's conversation (`<parent>.<agent>.turn-<n>.<call id>`).
 */
function callLinks(
  conversationId: string,
  turn: number | undefined,
  part: ToolPart,
  places: Places | undefined,
): CallLinks {
  if (turn === undefined || !places) return {};
  const links: CallLinks = {};
  const activity = places.calls[`tool-${turn}-${part.toolCallId}`];
  if (activity) links.webUi = activity;
  const child = `${conversationId}.${getToolName(part)}.turn-${turn}.${part.toolCallId}`;
  if (child in places.subAgents) links.subAgent = { id: child, webUi: places.subAgents[child] ?? null };
  return links;
}

function ToolCall({
  part,
  links,
  onApproval,
}: {
  part: ToolPart;
  links: CallLinks;
  onApproval: (approvalId: string, approved: boolean, reason?: string) => void;
}) {
  const [reason, setReason] = useState('');
  const output = part.state === 'output-available' ? (part.output as ChatToolOutput) : undefined;
  const progress = output && 'progress' in output ? output.progress : undefined;
  const text = output && 'text' in output ? output.text : undefined;
  const name = getToolName(part);
  return (
    <div className="tool" data-tool={name} data-state={part.state} data-call={part.toolCallId}>
      <div className="tool-head">
        <code className="tool-name">{name}</code>
        <span className={`badge ${part.state}`}>{stateLabel(part)}</span>
        <span className="grow" />
        {links.subAgent ? (
          <a className="sub-agent" href={`#/conversations/${encodeURIComponent(links.subAgent.id)}`}>
            sub-agent conversation
          </a>
        ) : null}
        {links.webUi ? (
          <a className="call-webui" href={links.webUi} target="_blank" rel="noreferrer">
            Web UI ↗
          </a>
        ) : null}
      </div>
      <code className="input">{formatJson(part.input ?? {})}</code>
      {progress ? <code className="progress">{formatJson(progress)}</code> : null}
      {text !== undefined ? <pre className="output">{text}</pre> : null}
      {part.state === 'output-error' ? <pre className="output error">{part.errorText}</pre> : null}
      {part.state === 'output-denied' || (part.state === 'approval-responded' && !part.approval.approved) ? (
        <p className="denied">Denied{part.approval?.reason ? `: ${part.approval.reason}` : ''}</p>
      ) : null}
      {part.state === 'approval-requested' ? (
        <div className="approval">
          <button type="button" className="approve" onClick={() => onApproval(part.approval.id, true)}>
            Approve
          </button>
          <input
            className="reason"
            placeholder="Reason (for a denial)"
            value={reason}
            onChange={(event) => setReason(event.target.value)}
          />
          <button type="button" className="deny" onClick={() => onApproval(part.approval.id, false, reason)}>
            Deny
          </button>
        </div>
      ) : null}
    </div>
  );
}

function stateLabel(part: ToolPart): string {
  switch (part.state) {
    case 'input-streaming':
      return 'starting';
    case 'input-available':
      return 'running';
    case 'approval-requested':
      return 'waiting for approval';
    case 'approval-responded':
      return part.approval.approved ? 'approved' : 'denied';
    case 'output-available':
      return part.preliminary ? 'running' : 'done';
    case 'output-error':
      return 'error';
    case 'output-denied':
      return 'denied';
  }
}
