import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';
import { useEffect, useState } from 'react';
import type { ConsoleConversation, ConsoleInfo } from '../client/consoleApi.ts';
import type { PendingApproval } from '../contract/types.ts';
import { ApiError, api, authHeaders } from './api.ts';
import { formatCost, formatJson } from './format.ts';
import { MessageView } from './MessageView.tsx';
import { usePolling } from './usePolling.ts';

/** One conversation: its state, its transcript and live turn, and what a person can do to it. */
export function ConversationView({ id, info }: { id: string; info: ConsoleInfo }) {
  const [first, setFirst] = useState<{ messages: UIMessage[]; truncated: boolean; isNew: boolean } | null>(
    null,
  );
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.messages(id).then(
      (answer) =>
        setFirst({ messages: answer.messages as UIMessage[], truncated: answer.truncated, isNew: false }),
      (failure: Error) => {
        // A conversation the console is about to start: its first message starts it.
        if (failure instanceof ApiError && failure.status === 404 && info.canStart)
          setFirst({ messages: [], truncated: false, isNew: true });
        else setError(failure.message);
      },
    );
  }, [id, info.canStart]);
  if (error) return <section className="conversation error">{error}</section>;
  if (!first) return <section className="conversation muted">Loading {id}…</section>;
  return <Chat id={id} first={first} />;
}

function Chat({
  id,
  first,
}: {
  id: string;
  first: { messages: UIMessage[]; truncated: boolean; isNew: boolean };
}) {
  const [input, setInput] = useState('');
  const { data: conversation, error: stateError } = usePolling(
    () =>
      api.conversation(id).catch((failure: Error) => {
        if (failure instanceof ApiError && failure.status === 404 && first.isNew) return null;
        throw failure;
      }),
    id,
  );
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    id,
    messages: first.messages,
    resume: !first.isNew,
    transport: new DefaultChatTransport({ api: '/api/chat', headers: authHeaders }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [actionError, setActionError] = useState<string | null>(null);
  // A conversation no worker answers for (ended long ago) shows Temporal's execution status.
  const state = conversation
    ? (conversation.status?.state ?? conversation.executionStatus.toLowerCase())
    : first.isNew
      ? 'new'
      : undefined;
  const busy = status === 'submitted' || status === 'streaming';
  const subAgentApprovals =
    conversation?.status?.pendingApprovals.filter((approval) => approval.subAgent) ?? [];
  return (
    <section className="conversation" aria-label={`Conversation ${id}`}>
      <div className="conversation-head">
        <h2 id="conversation-id">{id}</h2>
        <span className={`badge ${state ?? ''}`} id="conversation-state">
          {state ?? '…'}
        </span>
        {conversation?.status ? <Spend conversation={conversation} /> : null}
        <span className="grow" />
        {conversation?.webUi ? (
          <a
            className="webui"
            id="conversation-webui"
            href={conversation.webUi}
            target="_blank"
            rel="noreferrer"
          >
            Web UI ↗
          </a>
        ) : null}
        <button
          type="button"
          id="cancel"
          disabled={conversation?.status?.state !== 'running' && !busy}
          onClick={() => {
            setActionError(null);
            api.cancel(id).catch((failure: Error) => setActionError(failure.message));
          }}
        >
          Cancel turn
        </button>
      </div>
      {stateError ? <p className="error">{stateError}</p> : null}
      {actionError ? <p className="error">{actionError}</p> : null}
      {subAgentApprovals.length > 0 ? (
        <SubAgentApprovals conversationId={id} approvals={subAgentApprovals} onError={setActionError} />
      ) : null}
      {first.truncated ? (
        <p className="muted">Older messages are left out; the Web UI has them all.</p>
      ) : null}
      <ol className="messages" id="messages">
        {messages.map((message) => (
          <MessageView
            key={message.id}
            message={message}
            conversationId={id}
            places={conversation ?? undefined}
            onApproval={(approvalId, approved, reason) =>
              void addToolApprovalResponse({ id: approvalId, approved, ...(reason ? { reason } : {}) })
            }
          />
        ))}
      </ol>
      {error ? (
        <p className="error" id="chat-error">
          {error.message}
        </p>
      ) : null}
      <form
        className="composer"
        onSubmit={(event) => {
          event.preventDefault();
          if (input.trim() === '') return;
          void sendMessage({ text: input });
          setInput('');
        }}
      >
        <textarea
          id="input"
          value={input}
          placeholder={
            first.isNew && messages.length === 0 ? 'The first message starts the conversation' : 'Message'
          }
          onChange={(event) => setInput(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey) {
              event.preventDefault();
              event.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <button type="submit" id="send" disabled={busy}>
          Send
        </button>
      </form>
      <p className="muted" id="chat-status">
        {status}
      </p>
    </section>
  );
}

function Spend({ conversation }: { conversation: ConsoleConversation }) {
  const spend = conversation.status?.spend.conversation;
  if (!spend) return null;
  return (
    <span className="muted spend" id="conversation-spend">
      turn {conversation.status?.turn} · {spend.modelCalls} model calls · {spend.toolCalls} tool calls ·{' '}
      {spend.inputTokens + spend.outputTokens} tokens · cost {formatCost(spend.cost)}
    </span>
  );
}

/** A sub-agent's calls wait on its parent: the chat shows the parent's turn, so they are decided here. */
function SubAgentApprovals({
  conversationId,
  approvals,
  onError,
}: {
  conversationId: string;
  approvals: PendingApproval[];
  onError: (message: string) => void;
}) {
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const decide = (approvalId: string, approve: boolean): void => {
    api
      .decide(conversationId, approvalId, approve, reasons[approvalId])
      .catch((failure: Error) => onError(failure.message));
  };
  return (
    <div className="approvals" id="sub-agent-approvals">
      <h3>Sub-agents waiting for approval</h3>
      {approvals.map((approval) => (
        <div className="approval" key={approval.approvalId} data-approval={approval.approvalId}>
          <span>
            <strong>{approval.subAgent?.agent}</strong> asks to run <code>{approval.toolName}</code>{' '}
            <code>{formatJson(approval.args)}</code>: {approval.reason}
          </span>
          <input
            placeholder="Reason (for a denial)"
            value={reasons[approval.approvalId] ?? ''}
            onChange={(event) => setReasons({ ...reasons, [approval.approvalId]: event.target.value })}
          />
          <button type="button" onClick={() => decide(approval.approvalId, true)}>
            Approve
          </button>
          <button type="button" className="deny" onClick={() => decide(approval.approvalId, false)}>
            Deny
          </button>
        </div>
      ))}
    </div>
  );
}
