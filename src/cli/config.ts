/** Where the CLI finds Temporal and which task queue it uses: flags first, then the environment. */
export interface ConnectionFlags {
  address?: string;
  namespace?: string;
  taskQueue?: string;
}

export interface ConnectionConfig {
  address: string;
  namespace: string;
  taskQueue: string;
}

export function connectionConfig(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
): ConnectionConfig {
  return {
    address: flags.address ?? env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    namespace: flags.namespace ?? env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: flags.taskQueue ?? env.YIEM_TASK_QUEUE ?? 'yiem-agent',
  };
}

/** The Web UI page of one conversation. */
export function conversationUiUrl(uiUrl: string, namespace: string, conversationId: string): string {
  return `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(conversationId)}`;
}

/** The Web UI of the dev server at `address`, by Temporal's convention of gRPC port + 1000. */
export function defaultUiUrl(address: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.YIEM_UI_URL) return env.YIEM_UI_URL;
  const [host = '127.0.0.1', port = '7233'] = address.split(':');
  return `http://${host}:${Number(port) + 1000}`;
}
