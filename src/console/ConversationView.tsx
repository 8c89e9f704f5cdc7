import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';
import { Fragment, useEffect, useRef, useState } from 'react';
import type { ConsoleConversation, ConsoleInfo, ConsoleMessages } from '../client/consoleApi.ts';
import type { ChatMessageDelivered, ChatMessageQueued } from '../client/uiMessageChunks.ts';
import type { PendingApproval } from '../contract/types/approvals.ts';
import type { MessageDelivery } from '../contract/types/messages.ts';
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
  const { data: conversation, error: stateError } = usePolling(
    () =>
      api.conversation(id).catch((failure: Error) => {
        if (failure instanceof ApiError && failure.status === 404 && first.isNew) return null;
        throw failure;
      }),
    id,
  );
  // The chat is made once with its callbacks: the data parts reach the posted messages' latest state.
  const onDeliveryPart = useRef<(part: { type: string; data: unknown }) => void>(() => {});
  const { messages, setMessages, sendMessage, resumeStream, addToolApprovalResponse, status, error } =
    useChat({
      id,
      messages: first.messages,
      resume: !first.isNew,
      transport: new DefaultChatTransport({ api: '/api/chat', headers: authHeaders }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onData: (part) => onDeliveryPart.current(part),
    });
  const [actionError, setActionError] = useState<string | null>(null);
  // A conversation no worker answers for (ended long ago) shows Temporal's execution status.
  const state = conversation
    ? (conversation.status?.state ?? conversation.executionStatus.toLowerCase())
    : first.isNew
      ? 'new'
      : undefined;
  const busy = status === 'submitted' || status === 'streaming';
  const { posted, post, notePart } = usePostedMessages(id, {
    busy,
    runningTurn: conversation?.status?.state === 'running' ? conversation.status.turn : null,
    setMessages,
    resumeStream,
    onError: setActionError,
  });
  onDeliveryPart.current = notePart;
  const subAgentApprovals =
    conversation?.status?.pendingApprovals.filter((approval) => approval.subAgent) ?? [];
  return (
    <section className="conversation" aria-label={`Conversation ${id}`}>
      <ChatHead
        id={id}
        conversation={conversation}
        state={state}
        canCancel={conversation?.status?.state === 'running' || busy}
        onError={setActionError}
      />
      {stateError ? <p className="error">{stateError}</p> : null}
      {conversation?.noWorker ? (
        <p className="error" id="no-worker">
          {conversation.noWorker}: read from the server's records
        </p>
      ) : null}
      {conversation?.keptApprovals?.length ? (
        <ul className="muted" id="kept-approvals">
          {conversation.keptApprovals.map((approval) => (
            <li key={`${approval.requestedAt} ${approval.approvalId ?? approval.call}`}>
              awaiting approval: {approval.call}
              {approval.approvalId ? ` (${approval.approvalId})` : ''}, decided once a worker runs
            </li>
          ))}
        </ul>
      ) : null}
      {actionError ? <p className="error">{actionError}</p> : null}
      {subAgentApprovals.length > 0 ? (
        <SubAgentApprovals conversationId={id} approvals={subAgentApprovals} onError={setActionError} />
      ) : null}
      {first.truncated ? (
        <p className="muted">Older messages are left out; the Web UI has them all.</p>
      ) : null}
      <ol className="messages" id="messages">
        {messages.map((message, index) => (
          <Fragment key={message.id}>
            {posted.map((each, at) =>
              // biome-ignore lint/suspicious/noArrayIndexKey: posted messages only ever grow, then all go
              each.at === index ? <PostedView key={at} message={each} /> : null,
            )}
            <MessageView
              message={message}
              conversationId={id}
              places={conversation ?? undefined}
              onApproval={(approvalId, approved, reason) =>
                void addToolApprovalResponse({ id: approvalId, approved, ...(reason ? { reason } : {}) })
              }
            />
          </Fragment>
        ))}
        {posted.map((message, index) =>
          message.at === undefined || message.at >= messages.length ? (
            // biome-ignore lint/suspicious/noArrayIndexKey: posted messages only ever grow, then all go
            <PostedView key={index} message={message} />
          ) : null,
        )}
      </ol>
      {error ? (
        <p className="error" id="chat-error">
          {error.message}
        </p>
      ) : null}
      <Composer
        busy={busy}
        submitting={status === 'submitted'}
        placeholder={
          first.isNew && messages.length === 0 ? 'The first message starts the conversation' : 'Message'
        }
        onSend={(text, delivery) => (busy ? post(text, delivery) : void sendMessage({ text }))}
      />
      <p className="muted" id="chat-status">
        {status}
      </p>
    </section>
  );
}

/** The conversation's id, state, spend, Web UI link and the cancel button. */
function ChatHead({
  id,
  conversation,
  state,
  canCancel,
  onError,
}: {
  id: string;
  conversation: ConsoleConversation | null | undefined;
  state: string | undefined;
  canCancel: boolean;
  onError: (message: string | null) => void;
}) {
  return (
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
        disabled={!canCancel}
        onClick={() => {
          onError(null);
          api.cancel(id).catch((failure: Error) => onError(failure.message));
        }}
      >
        Cancel turn
      </button>
    </div>
  );
}

/** The message box; while a turn runs, with the delivery of a message posted into it. */
function Composer({
  busy,
  submitting,
  placeholder,
  onSend,
}: {
  busy: boolean;
  submitting: boolean;
  placeholder: string;
  onSend: (text: string, delivery: MessageDelivery) => void;
}) {
  const [input, setInput] = useState('');
  const [delivery, setDelivery] = useState<MessageDelivery>('steer');
  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        if (input.trim() === '') return;
        onSend(input, delivery);
        setInput('');
      }}
    >
      <textarea
        id="input"
        value={input}
        placeholder={placeholder}
        onChange={(event) => setInput(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey) {
            event.preventDefault();
            event.currentTarget.form?.requestSubmit();
          }
        }}
      />
      {busy ? (
        <select
          id="delivery"
          aria-label="Delivery"
          value={delivery}
          onChange={(event) => setDelivery(event.target.value as MessageDelivery)}
        >
          {(Object.keys(DELIVERY_LABELS) as MessageDelivery[]).map((choice) => (
            <option key={choice} value={choice}>
              {DELIVERY_LABELS[choice]}
            </option>
          ))}
        </select>
      ) : null}
      <button type="submit" id="send" disabled={submitting}>
        Send
      </button>
    </form>
  );
}

/** What the composer's delivery choice says, as docs/control.md's "Steering, follow-up and interrupt" does. */
const DELIVERY_LABELS: Record<MessageDelivery, string> = {
  steer: 'steer',
  followUp: 'follow-up',
  interrupt: 'interrupt',
};

/** A message posted while a turn ran, and once the chat stream tells it, where it went. */
interface PostedMessage {
  text: string;
  delivery: MessageDelivery;
  /** The conversation's id of the message, from its `data-yiem-message-queued` part. */
  messageId?: number;
  /** Where it joined, from its `data-yiem-message-delivered` part. */
  joined?: ChatMessageDelivered;
  /**
   * Set when the message opened the turn that runs now (a follow-up, say): it shows before the
   * message at this index (the turn's reply, as it streams), until that turn ends.
   */
  at?: number;
}

/**
 * The reloaded transcript, with the posted messages that opened the running turn kept as posted (in
 * place of their transcript copy), so that the running turn's stream tells them where they went:
 * the rest the transcript has where they joined.
 */
function keepOpeners(
  answer: ConsoleMessages,
  posted: PostedMessage[],
): { messages: UIMessage[]; kept: PostedMessage[] } {
  const messages = answer.messages as UIMessage[];
  const finished = messages.slice(0, messages.length - answer.openingMessages);
  const openers = messages.slice(finished.length);
  const kept: PostedMessage[] = [];
  for (const message of posted) {
    const at = openers.findIndex((opener) => userMessageText(opener) === message.text);
    if (at < 0) continue;
    openers.splice(at, 1);
    kept.push(message);
  }
  const shown = [...finished, ...openers];
  return { messages: shown, kept: kept.map((message) => ({ ...message, at: shown.length })) };
}

function userMessageText(message: UIMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function PostedView({ message }: { message: PostedMessage }) {
  return (
    <li
      className="message user queued"
      data-role="queued"
      data-delivery={message.delivery}
      data-joined={message.joined ? 'true' : undefined}
    >
      <p className="text">{message.text}</p>
      <span className="badge">{postedBadge(message)}</span>
    </li>
  );
}

function postedBadge({ delivery, joined }: PostedMessage): string {
  const label = DELIVERY_LABELS[delivery];
  if (!joined) return `queued · ${label}`;
  if (joined.afterModelCall === 0) return `${label} · opened turn ${joined.turn}`;
  const cancelled = joined.interruptedCalls ? ` · cut ${joined.interruptedCalls} tool calls short` : '';
  return `${label} · joined turn ${joined.turn} after model call ${joined.afterModelCall}${cancelled}`;
}

/**
 * The posted message a queued part tells of: the oldest not yet told, sent the same way, whose text
 * begins with the part's (the event's first line, cut with a trailing `…`). The console's POST
 * answers no message id, so the text is what ties them.
 */
function queuedMatch(posted: PostedMessage[], queued: ChatMessageQueued): number {
  const start = queued.text.replace(/…$/, '');
  return posted.findIndex(
    (message) =>
      message.messageId === undefined &&
      message.delivery === queued.delivery &&
      message.text.startsWith(start),
  );
}

/**
 * Messages sent while the chat follows a turn. They are posted through the console's API, not
 * `useChat`: the chat streams the running turn already, and a second chat request would follow it
 * twice. They show as queued until the followed turn ends; then the transcript, which has them where
 * they joined, replaces the chat's messages, and a turn that runs then (a follow-up's) is followed,
 * its opening messages shown as posted until it ends. Meanwhile the streams' data parts say, as they
 * happen, that each was queued and where it joined (a follow-up's, in the turn it opened).
 */
function usePostedMessages(
  id: string,
  chat: {
    busy: boolean;
    runningTurn: number | null;
    setMessages: (messages: UIMessage[]) => void;
    resumeStream: () => Promise<void>;
    onError: (message: string) => void;
  },
) {
  const { busy, runningTurn, setMessages, resumeStream, onError } = chat;
  const [posted, setPosted] = useState<PostedMessage[]>([]);
  // The reload reads the posted messages as they are when its answer comes.
  const postedNow = useRef(posted);
  postedNow.current = posted;
  // The state re-runs the effect that follows a turn; the ref stops it in the pass that starts a reload.
  const [reloading, setReloading] = useState(false);
  const reloadingNow = useRef(false);
  /** Set once a message was posted: from then on the page follows each turn that runs. */
  const following = useRef(false);
  const needsReload = useRef(false);
  const followedTurn = useRef<number | null>(null);
  useEffect(() => {
    if (busy || !needsReload.current) return;
    needsReload.current = false;
    reloadingNow.current = true;
    setReloading(true);
    api
      .messages(id)
      .then(
        (answer) => {
          const { messages, kept } = keepOpeners(answer, postedNow.current);
          setMessages(messages);
          setPosted(kept);
        },
        (failure: Error) => onError(failure.message),
      )
      .finally(() => {
        reloadingNow.current = false;
        setReloading(false);
      });
  }, [busy, id, setMessages, onError]);
  useEffect(() => {
    if (!following.current || busy || reloading || reloadingNow.current || runningTurn === null) return;
    if (followedTurn.current === runningTurn) return;
    followedTurn.current = runningTurn;
    needsReload.current = true;
    void resumeStream();
  }, [busy, reloading, runningTurn, resumeStream]);
  const post = (text: string, delivery: MessageDelivery): void => {
    following.current = true;
    needsReload.current = true;
    // The chat follows this turn already.
    followedTurn.current = runningTurn;
    setPosted((before) => [...before, { text, delivery }]);
    api.post(id, text, delivery).catch((failure: Error) => onError(failure.message));
  };
  const notePart = (part: { type: string; data: unknown }): void => {
    if (part.type === 'data-yiem-message-queued') {
      const queued = part.data as ChatMessageQueued;
      setPosted((before) => {
        const at = queuedMatch(before, queued);
        if (at < 0) return before;
        return before.map((message, index) =>
          index === at ? { ...message, messageId: queued.messageId } : message,
        );
      });
    } else if (part.type === 'data-yiem-message-delivered') {
      const joined = part.data as ChatMessageDelivered;
      setPosted((before) =>
        before.map((message) => (message.messageId === joined.messageId ? { ...message, joined } : message)),
      );
    }
  };
  return { posted, post, notePart };
}

function Spend({ conversation }: { conversation: ConsoleConversation }) {
  const spend = conversation.status?.spend.conversation;
  if (!spend) return null;
  return (
    <span className="muted spend" id="conversation-spend">
      turn {conversation.status?.turn} · {spend.modelCalls} model calls · {spend.toolCalls} tool calls ·{' '}
      {spend.inputTokens + spend.outputTokens} tokens · cost {formatCost(spend.cost)} · {spend.actions ?? 0}{' '}
      Temporal Actions
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
