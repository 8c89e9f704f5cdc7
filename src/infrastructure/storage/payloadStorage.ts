import os from 'node:os';
import path from 'node:path';
import { ExternalStorage, type StorageDriver } from '@temporalio/common';
import { DEFAULT_PAYLOAD_THRESHOLD_BYTES } from '../../contract/limits.ts';
import { processEnvironment } from '../environment.ts';
import { FileStorageDriver } from './fileDriver.ts';
import { fileStoreIdentity, type PayloadStoreIdentity } from './payloadStoreIdentity.ts';
import { S3StorageDriver, s3DriverFromEnv } from './s3Driver.ts';

/** Options of {@link payloadStorage}. */
export interface PayloadStorageOptions {
  /** Where the filesystem driver keeps payloads. Default `defaultPayloadsDir()`. */
  directory?: string;
  /** Another driver, e.g. Temporal's S3 driver; replaces the filesystem one. */
  driver?: StorageDriver;
  /** Default {@link DEFAULT_PAYLOAD_THRESHOLD_BYTES}. */
  thresholdBytes?: number;
}

/** Temporal External Storage with yiem's defaults: the filesystem driver and a 32 KB threshold. */
export function payloadStorage(options: PayloadStorageOptions = {}): ExternalStorage {
  const driver = options.driver ?? new FileStorageDriver(options.directory ?? defaultPayloadsDir());
  const thresholdBytes = options.thresholdBytes ?? DEFAULT_PAYLOAD_THRESHOLD_BYTES;
  const storage = new ExternalStorage({ drivers: [driver], payloadSizeThreshold: thresholdBytes });
  if (driver instanceof FileStorageDriver) {
    const { directory } = driver;
    knownStores.set(storage, { identity: () => fileStoreIdentity(directory), thresholdBytes });
  } else if (driver instanceof S3StorageDriver) {
    knownStores.set(storage, { identity: () => driver.identity(), thresholdBytes });
  }
  return storage;
}

/** How to tell which store each one {@link payloadStorage} made with this package's drivers is. */
const knownStores = new WeakMap<
  ExternalStorage,
  { identity: () => Promise<PayloadStoreIdentity>; thresholdBytes: number }
>();

/**
 * Which store `storage` is, and from what payload size it is used; undefined for a store of another
 * driver (its identity is that driver's business) or none.
 */
export async function payloadStoreOf(
  storage: ExternalStorage | undefined,
): Promise<(PayloadStoreIdentity & { thresholdBytes: number }) | undefined> {
  const known = storage && knownStores.get(storage);
  if (!known) return undefined;
  return { ...(await known.identity()), thresholdBytes: known.thresholdBytes };
}

/**
 * The payload store configured by the environment: `YIEM_PAYLOADS_DIR` (default
 * `defaultPayloadsDir()`) and `YIEM_PAYLOAD_THRESHOLD_BYTES`. Undefined when
 * `YIEM_PAYLOAD_STORAGE=off`: every payload then stays inline and a conversation stops at
 * Temporal's 2 MB payload limit. `YIEM_PAYLOAD_STORAGE=s3` keeps them in an S3 bucket instead
 * (`s3DriverFromEnv`).
 *
 * @throws when the threshold is not a non-negative integer, or YIEM_PAYLOAD_STORAGE not file, s3 or off.
 */
export function payloadStorageFromEnv(env: Record<string, string | undefined>): ExternalStorage | undefined {
  if (env.YIEM_PAYLOAD_STORAGE === 'off') return undefined;
  if (env.YIEM_PAYLOAD_STORAGE && !['file', 's3'].includes(env.YIEM_PAYLOAD_STORAGE)) {
    throw new Error(
      `YIEM_PAYLOAD_STORAGE=${env.YIEM_PAYLOAD_STORAGE}: expected file (the default), s3 or off`,
    );
  }
  const threshold = env.YIEM_PAYLOAD_THRESHOLD_BYTES;
  if (threshold && !/^\d+$/.test(threshold)) {
    throw new Error(`YIEM_PAYLOAD_THRESHOLD_BYTES=${threshold}: expected a number of bytes`);
  }
  return payloadStorage({
    ...(env.YIEM_PAYLOAD_STORAGE === 's3'
      ? { driver: s3DriverFromEnv(env) }
      : { directory: env.YIEM_PAYLOADS_DIR || defaultPayloadsDir(env) }),
    ...(threshold ? { thresholdBytes: Number(threshold) } : {}),
  });
}

/**
 * Where the payload store is when `YIEM_PAYLOADS_DIR` is not set: `<YIEM_DATA_DIR>/payloads` when
 * that is set, else the user's data folder (`$XDG_DATA_HOME/yiem-agent/payloads`, by default
 * `~/.local/share/yiem-agent/payloads`). Never relative to the working directory: a worker started
 * in one project and a client in another must find the same store.
 */
export function defaultPayloadsDir(env: Record<string, string | undefined> = processEnvironment()): string {
  if (env.YIEM_DATA_DIR) return path.resolve(env.YIEM_DATA_DIR, 'payloads');
  const dataHome = env.XDG_DATA_HOME || path.join(env.HOME || os.homedir(), '.local', 'share');
  return path.resolve(dataHome, 'yiem-agent', 'payloads');
}
