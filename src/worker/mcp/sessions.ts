import type { McpServerConfig } from '../../contract/types/mcp.ts';
import { McpConnection } from './connection.ts';

interface Session {
  connection: McpConnection;
  running: number;
  idleTimer?: NodeJS.Timeout;
}

/**
 * The sessions of one stateful MCP server on this worker, one per conversation. A session idle for
 * `idleMs` is closed; the conversation's next call on this worker opens a new one.
 */
export class McpSessions {
  readonly #server: string;
  readonly #config: McpServerConfig;
  readonly #idleMs: number;
  readonly #onToolsChanged: () => void;
  readonly #sessions = new Map<string, Session>();

  constructor(
    server: string,
    config: McpServerConfig,
    options: { idleMs: number; onToolsChanged: () => void },
  ) {
    this.#server = server;
    this.#config = config;
    this.#idleMs = options.idleMs;
    this.#onToolsChanged = options.onToolsChanged;
  }

  /** Runs `use` with the conversation's session, opening it first if this worker holds none. */
  async with<T>(conversationId: string, use: (connection: McpConnection) => Promise<T>): Promise<T> {
    let session = this.#sessions.get(conversationId);
    if (!session) {
      session = {
        connection: new McpConnection(this.#server, this.#config, this.#onToolsChanged),
        running: 0,
      };
      this.#sessions.set(conversationId, session);
    }
    clearTimeout(session.idleTimer);
    session.running++;
    try {
      return await use(session.connection);
    } finally {
      session.running--;
      if (session.running === 0) this.#closeWhenIdle(conversationId, session);
    }
  }

  /** How many sessions are open. */
  get size(): number {
    return this.#sessions.size;
  }

  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    for (const session of sessions) clearTimeout(session.idleTimer);
    await Promise.all(sessions.map((session) => session.connection.close()));
  }

  #closeWhenIdle(conversationId: string, session: Session): void {
    session.idleTimer = setTimeout(() => {
      if (this.#sessions.get(conversationId) !== session || session.running > 0) return;
      this.#sessions.delete(conversationId);
      void session.connection.close();
    }, this.#idleMs);
    session.idleTimer.unref();
  }
}
