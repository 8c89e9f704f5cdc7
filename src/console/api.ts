import type {
  ConsoleConversation,
  ConsoleInfo,
  ConsoleListing,
  ConsoleMessages,
} from '../client/consoleApi.ts';
import type { MessageDelivery } from '../contract/types/messages.ts';

/**
 * The console server's JSON API, with the token the page was opened with (`?token=`), kept for the
 * tab's life and dropped from the address so that it is not bookmarked or shared by accident.
 */
const TOKEN_KEY = 'yiem-console-token';

function takeToken(): string | null {
  const url = new URL(window.location.href);
  const given = url.searchParams.get('token');
  if (given) {
    sessionStorage.setItem(TOKEN_KEY, given);
    url.searchParams.delete('token');
    window.history.replaceState(null, '', url);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

const token = takeToken();

/** Headers every request to the server carries. */
export const authHeaders: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};

/** A refusal of the server, with its status and its message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`/api/console${path}`, {
    ...init,
    headers: { ...authHeaders, ...(init.body ? { 'content-type': 'application/json' } : {}) },
  });
  if (!response.ok) throw new ApiError(response.status, await response.text());
  return (await response.json()) as T;
}

const conversationPath = (id: string): string => `/conversations/${encodeURIComponent(id)}`;

export const api = {
  info: () => call<ConsoleInfo>('/info'),
  list: () => call<ConsoleListing[]>('/conversations'),
  conversation: (id: string) => call<ConsoleConversation>(conversationPath(id)),
  messages: (id: string) => call<ConsoleMessages>(`${conversationPath(id)}/messages`),
  post: (id: string, text: string, delivery: MessageDelivery) =>
    call<{ posted: true }>(`${conversationPath(id)}/messages`, {
      method: 'POST',
      body: JSON.stringify({ text, delivery }),
    }),
  cancel: (id: string) =>
    call<{ running: boolean }>(`${conversationPath(id)}/cancel`, { method: 'POST', body: '{}' }),
  decide: (id: string, approvalId: string, approve: boolean, reason?: string) =>
    call<unknown>(`${conversationPath(id)}/approvals/${encodeURIComponent(approvalId)}`, {
      method: 'POST',
      body: JSON.stringify({ approve, ...(reason ? { reason } : {}) }),
    }),
};
