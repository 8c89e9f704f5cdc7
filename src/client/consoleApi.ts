import type { ApprovalWait } from '../contract/types/approvals.ts';
import type { ConversationStatus } from '../contract/types/conversation.ts';
import type { ConsoleUiMessage } from './consoleTranscript.ts';
import type { KeptApproval } from './keptApprovals.ts';

/**
 * What the console's JSON API (`serveConsole`, under `/api/console`) answers: types only, which the
 * page in src/console/ imports too.
 */

/** `GET /api/console/info`: what the page needs to know of the server. */
export interface ConsoleInfo {
  /** The Temporal namespace the console reads. */
  namespace: string;
  /** The Web UI's address, to link into; null when the console was not told it. */
  webUiUrl: string | null;
  /** Whether the page may start conversations (the server was given a new conversation's options). */
  canStart: boolean;
}

/** One row of `GET /api/console/conversations`. */
export interface ConsoleListing {
  /** The conversation id. */
  id: string;
  /** `YiemStatus`, when the namespace has it. */
  status: string | null;
  /** `YiemTurns`, when the namespace has it. */
  turns: number | null;
  /** `YiemAgent`, when the namespace has it. */
  agent: string | null;
  /** `YiemCost`, when the namespace has it. */
  cost: number | null;
  /** When its first run started (ISO 8601). */
  startTime: string;
  /** The Temporal execution status (`RUNNING`, `COMPLETED`, …). */
  executionStatus: string;
  /** For a row that waits for approval: whose (`ConversationStatus.awaitingApproval`), when it answered. */
  awaitingApproval: ApprovalWait | null;
}

/** `GET /api/console/conversations/<id>`: the conversation's state and its places in the Web UI. */
export interface ConsoleConversation {
  /** The conversation id. */
  id: string;
  /** The Temporal execution status (`RUNNING`, `COMPLETED`, …). */
  executionStatus: string;
  /** Null when the conversation cannot be asked (it ended and no worker answers Queries). */
  status: ConversationStatus | null;
  /** Set when no worker answered for it: `no worker on task queue "q" since …`. */
  noWorker: string | null;
  /** When no worker answered: the tool calls waiting for approval, from the server's history. */
  keptApprovals: KeptApproval[] | null;
  /** The Web UI's page of the conversation, when the console knows the Web UI. */
  webUi: string | null;
  /** Each tool call's activity (by activity id: `tool-<turn>-<call id>`) in the Web UI's history. */
  calls: Record<string, string>;
  /** The sub-agent conversations its calls started, by conversation id, with their Web UI page. */
  subAgents: Record<string, string | null>;
}

/** `GET /api/console/conversations/<id>/messages`. */
export interface ConsoleMessages {
  /** The finished part of the transcript; a running turn follows through the chat endpoint. */
  messages: ConsoleUiMessage[];
  /** Whether older messages were left out (the console shows the latest ones). */
  truncated: boolean;
  /**
   * How many of the last `messages` are the user messages the running turn began with (0 when no
   * turn runs): a page that shows one of them as a posted message keeps that one instead.
   */
  openingMessages: number;
  /** Set when no worker answered and the transcript was read from the server's history instead. */
  noWorker: string | null;
}
