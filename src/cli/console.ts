import type { AgentClient } from '../client/client.ts';
import { type RunningConsole, serveConsole } from '../client/consoleServer.ts';
import type { ToolExecutionMode } from '../contract/types/conversation.ts';
import { cliDecider } from './config.ts';

/** The console's port by default: next to the dev server's Web UI (8233). */
export const DEFAULT_CONSOLE_PORT = 8234;

export interface ConsoleSettings {
  client: AgentClient;
  host: string;
  /** 0: a free one. The default port, when taken, falls back to a free one. */
  port: number;
  token?: string;
  webUiUrl: string;
  /** What a conversation started from the console gets. */
  systemPrompt: string;
  toolExecution: ToolExecutionMode;
}

/** The console for `yiem console` and `yiem dev`, deciding approvals as `yiem console (user@host)`. */
export async function openConsole(settings: ConsoleSettings): Promise<RunningConsole> {
  const serve = (port: number) =>
    serveConsole({
      client: settings.client,
      host: settings.host,
      port,
      ...(settings.token ? { token: settings.token } : {}),
      webUiUrl: settings.webUiUrl,
      decider: cliDecider('yiem console'),
      newConversation: () => ({ systemPrompt: settings.systemPrompt, toolExecution: settings.toolExecution }),
    });
  try {
    return await serve(settings.port);
  } catch (error) {
    // A second console (another dev running) still starts, on a port of its own.
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE' && settings.port === DEFAULT_CONSOLE_PORT)
      return serve(0);
    throw error;
  }
}

/** The address to open: with the token, for a console that needs one (the page keeps it). */
export function consoleLink(running: RunningConsole, token: string | undefined): string {
  return token ? `${running.url}?token=${encodeURIComponent(token)}` : running.url;
}
