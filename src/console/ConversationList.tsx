import type { ConsoleInfo, ConsoleListing } from '../client/consoleApi.ts';
import type { ApprovalWait } from '../contract/types/approvals.ts';
import { api } from './api.ts';
import { formatCost, formatTime, newConversationId } from './format.ts';
import { usePolling } from './usePolling.ts';

const WAITING_STATUS = 'awaitingApproval';

/** Every conversation of the namespace, newest first: status, agent, turns, approval wait, spend. */
export function ConversationList({ info, selected }: { info: ConsoleInfo; selected: string | null }) {
  const { data: rows, error } = usePolling(() => api.list(), 'list');
  return (
    <section className="list" aria-label="Conversations">
      <div className="list-head">
        <h2>Conversations</h2>
        {info.canStart ? (
          <button
            type="button"
            id="new-conversation"
            onClick={() => {
              window.location.hash = `#/conversations/${newConversationId()}`;
            }}
          >
            New conversation
          </button>
        ) : null}
      </div>
      {error ? <p className="error">{error}</p> : null}
      {rows === null ? (
        <p className="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="muted">No conversations yet.</p>
      ) : (
        <table id="conversations">
          <thead>
            <tr>
              <th>Conversation</th>
              <th>Status</th>
              <th className="agent">Agent</th>
              <th className="number">Turns</th>
              <th>Waiting</th>
              <th className="number">Spend</th>
              <th className="started">Started</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <Row key={row.id} row={row} selected={row.id === selected} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Row({ row, selected }: { row: ConsoleListing; selected: boolean }) {
  const status = row.status ?? row.executionStatus.toLowerCase();
  return (
    <tr data-id={row.id} className={selected ? 'selected' : undefined}>
      <td className="id">
        <a href={`#/conversations/${encodeURIComponent(row.id)}`}>{row.id}</a>
      </td>
      <td className="status">
        <span className={`badge ${status}`}>{status}</span>
      </td>
      <td className="agent">{row.agent ?? '—'}</td>
      <td className="turns number">{row.turns ?? '—'}</td>
      <td className="waiting">{row.status === WAITING_STATUS ? waitingFor(row.awaitingApproval) : ''}</td>
      <td className="cost number">{formatCost(row.cost)}</td>
      <td className="started">{formatTime(row.startTime)}</td>
    </tr>
  );
}

/** `approval` for its own calls; a sub-agent's wait names the sub-agent's conversation. */
function waitingFor(wait: ApprovalWait | null): string {
  if (!wait) return 'approval';
  const own = wait.ownCalls > 0 ? ['approval'] : [];
  return [...own, ...wait.subAgents.map((id) => `sub-agent ${id}`)].join(', ');
}
