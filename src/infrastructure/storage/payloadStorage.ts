import path from 'node:path';
import { ExternalStorage, type StorageDriver } from '@temporalio/common';
import { DEFAULT_PAYLOAD_THRESHOLD_BYTES } from '../../contract/limits.ts';
import { defaultDataDir } from '../server/temporalCli.ts';
import { FileStorageDriver } from './fileDriver.ts';
import { s3DriverFromEnv } from './s3Driver.ts';

export interface PayloadStorageOptions {
  /** Where the filesystem driver keeps payloads. Default `<dataDir>/payloads` (`.yiem/payloads`). */
  directory?: string;
  /** Another driver, e.g. Temporal's S3 driver; replaces the filesystem one. */
  driver?: StorageDriver;
  /** Default {@link DEFAULT_PAYLOAD_THRESHOLD_BYTES}. */
  thresholdBytes?: number;
}

/** Temporal External Storage with yiem's defaults: the filesystem driver and a 32 KB threshold. */
export function payloadStorage(options: PayloadStorageOptions = {}): ExternalStorage {
  const driver = options.driver ?? new FileStorageDriver(options.directory ?? defaultPayloadsDir());
  return new ExternalStorage({
    drivers: [driver],
    payloadSizeThreshold: options.thresholdBytes ?? DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  });
}

/**
 * The payload store configured by the environment: `YIEM_PAYLOADS_DIR` (default
 * `<YIEM_DATA_DIR or .yiem>/payloads`) and `YIEM_PAYLOAD_THRESHOLD_BYTES`. Undefined when
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

function defaultPayloadsDir(env: Record<string, string | undefined> = process.env): string {
  return path.join(defaultDataDir(env as NodeJS.ProcessEnv), 'payloads');
}
