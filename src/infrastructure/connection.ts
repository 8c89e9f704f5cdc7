import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { processEnvironment } from './environment.ts';

/** Default frontend: the embedded dev server (`yiem server`). */
export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
/** Default namespace: Temporal's own default. */
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

/** What a client or a worker says when no Temporal server answers at `address`: where it looked and what to start. */
export function unreachableServerMessage(address: string, detail: string): string {
  return `Temporal at ${address} is unreachable (${detail}). Start a server ("yiem server" or "yiem dev"), or give the address (option address, env TEMPORAL_ADDRESS).`;
}

/**
 * Where and how to reach Temporal. Anything left out comes from Temporal's own conventions
 * (`@temporalio/envconfig`): the `TEMPORAL_*` environment variables (`TEMPORAL_ADDRESS`,
 * `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS_CLIENT_CERT_PATH`, `TEMPORAL_TLS_CLIENT_KEY_PATH`,
 * `TEMPORAL_TLS_SERVER_CA_CERT_PATH`, `TEMPORAL_TLS_SERVER_NAME`, `TEMPORAL_TLS`, `TEMPORAL_GRPC_META_*`),
 * then the profile (`TEMPORAL_PROFILE`, default `default`) of the TOML config file
 * (`TEMPORAL_CONFIG_FILE`, default `~/.config/temporalio/temporal.toml`), then the dev server defaults.
 */
export interface TemporalConnectionSettings {
  /** `host:port` of the frontend. */
  address?: string;
  /** The Temporal namespace. Default: env `TEMPORAL_NAMESPACE`, else `default`. */
  namespace?: string;
  /** An API key (Temporal Cloud); turns TLS on. */
  apiKey?: string;
  /** The profile to read from the config file. */
  profile?: string;
  /** The TOML config file to read profiles from. */
  configFile?: string;
  /** The environment to read; default `process.env`. Empty values count as unset. */
  env?: Record<string, string | undefined>;
}

/** What both the worker's `NativeConnection` and the client's `Connection` are opened with. */
export interface ResolvedTemporalConnection {
  /** Options accepted by `NativeConnection.connect` and `Connection.connect`/`Connection.lazy`. */
  connectionOptions: NativeConnectionOptions & {
    /** `host:port` of the frontend, always set once resolved. */
    address: string;
  };
  /** The namespace to use. */
  namespace: string;
}

/**
 * Resolves explicit settings over the environment and config profile, so the same worker and CLI
 * reach the embedded dev server, a self-hosted cluster or Temporal Cloud.
 *
 * @throws when an explicitly requested profile does not exist or the config file is malformed.
 */
export function resolveTemporalConnection(
  settings: TemporalConnectionSettings = {},
): ResolvedTemporalConnection {
  const env = withoutEmptyValues(settings.env ?? processEnvironment());
  const configFile = settings.configFile ?? env.TEMPORAL_CONFIG_FILE;
  const loaded = loadClientConnectConfig({
    overrideEnvVars: env,
    ...(settings.profile ? { profile: settings.profile } : {}),
    ...(configFile ? { configSource: { path: configFile } } : {}),
  });
  const apiKey = settings.apiKey ?? loaded.connectionOptions.apiKey;
  // An API key means Temporal Cloud, which only speaks TLS.
  const tls = loaded.connectionOptions.tls ?? (apiKey ? true : undefined);
  const { metadata } = loaded.connectionOptions;
  const options: ResolvedTemporalConnection['connectionOptions'] = {
    address: settings.address ?? loaded.connectionOptions.address ?? DEFAULT_TEMPORAL_ADDRESS,
    ...(apiKey ? { apiKey } : {}),
    ...(tls !== undefined ? { tls } : {}),
    ...(metadata && Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
  return {
    connectionOptions: options,
    namespace: settings.namespace ?? loaded.namespace ?? DEFAULT_TEMPORAL_NAMESPACE,
  };
}

/** `TEMPORAL_API_KEY=` in a compose file or .env means "not set", not "an empty key". */
function withoutEmptyValues(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
    ),
  );
}
