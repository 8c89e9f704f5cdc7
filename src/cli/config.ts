import os from 'node:os';
import { resolveTemporalConnection } from '../infrastructure/connection.ts';
import { cliEnvironment } from './environment.ts';

/** Where the CLI finds Temporal and which task queue it uses: flags first, then the environment. */
export interface ConnectionFlags {
  address?: string;
  namespace?: string;
  taskQueue?: string;
  /** A profile of Temporal's config file (env `TEMPORAL_PROFILE`). */
  profile?: string;
}

export interface ConnectionConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  profile?: string;
  /** Whether the connection uses TLS (Temporal Cloud, a secured cluster). */
  tls: boolean;
}

/** Flags over Temporal's environment variables and config profile (see `resolveTemporalConnection`). */
export function connectionConfig(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = cliEnvironment(),
): ConnectionConfig {
  const resolved = resolveTemporalConnection({
    env,
    ...(flags.address ? { address: flags.address } : {}),
    ...(flags.namespace ? { namespace: flags.namespace } : {}),
    ...(flags.profile ? { profile: flags.profile } : {}),
  });
  return {
    address: resolved.connectionOptions.address,
    namespace: resolved.namespace,
    taskQueue: flags.taskQueue ?? (env.YIEM_TASK_QUEUE || 'yiem-agent'),
    ...(flags.profile ? { profile: flags.profile } : {}),
    tls: Boolean(resolved.connectionOptions.tls),
  };
}

/**
 * The price of a million Temporal Cloud Actions (`YIEM_ACTION_PRICE`), shown beside the Actions a
 * turn or a conversation used; unset or not a number of at least 0: no price is shown.
 */
export function actionPricePerMillion(env: NodeJS.ProcessEnv = cliEnvironment()): number | undefined {
  const price = Number(env.YIEM_ACTION_PRICE);
  return env.YIEM_ACTION_PRICE && Number.isFinite(price) && price >= 0 ? price : undefined;
}

/** The Web UI page of one conversation. */
export function conversationUiUrl(uiUrl: string, namespace: string, conversationId: string): string {
  return `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(conversationId)}`;
}

/** The Web UI of the dev server at `address`, by Temporal's convention of gRPC port + 1000. */
export function defaultUiUrl(address: string, env: NodeJS.ProcessEnv = cliEnvironment()): string {
  if (env.YIEM_UI_URL) return env.YIEM_UI_URL;
  const [host = '127.0.0.1', port = '7233'] = address.split(':');
  return `http://${host}:${Number(port) + 1000}`;
}

/** How a decision made from this command line names its decider: `yiem approve (alice@laptop)`. */
export function cliDecider(command: string): string {
  return `${command} (${os.userInfo().username}@${os.hostname()})`;
}
