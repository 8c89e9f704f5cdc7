import { fileURLToPath } from 'node:url';
import type { DataConverter, ExternalStorage, PayloadCodec } from '@temporalio/common';
import { payloadStorageFromEnv, payloadStoreOf } from '../storage/payloadStorage.ts';
import type { StoreAnnouncement } from '../storage/payloadStoreIdentity.ts';
import { type AesGcmCodecOptions, AesGcmPayloadCodec } from './aesGcmCodec.ts';
import { codecKeysFromEnv } from './keys.ts';

const ENCODING_FAILURE_CONVERTER = fileURLToPath(new URL('./failureConverter.cjs', import.meta.url));

/**
 * A data converter that runs every payload (inputs, results, updates, queries, summaries) through
 * `codec`, and failure messages and stack traces as well. A worker given a prebuilt workflow bundle
 * only encodes the failures of workflow code when the bundle was built with the same
 * `failureConverterPath`. With `storage`, large payloads go to the payload store after encryption,
 * so the store holds only ciphertext.
 */
export function encryptedDataConverter(codec: PayloadCodec, storage?: ExternalStorage): DataConverter {
  return {
    payloadCodecs: [codec],
    failureConverterPath: ENCODING_FAILURE_CONVERTER,
    ...(storage ? { externalStorage: storage } : {}),
  };
}

/**
 * The AES-GCM codec configured by `YIEM_CODEC_KEYS` / `YIEM_CODEC_KEY_FILE`, if any. It refuses
 * unencrypted payloads unless `YIEM_CODEC_ALLOW_UNENCRYPTED=1` (for migrating to encryption) or
 * `options.allowUnencrypted` (for readers only, such as the codec server).
 */
export function codecFromEnv(
  env: Record<string, string | undefined>,
  options: AesGcmCodecOptions = {},
): AesGcmPayloadCodec | undefined {
  const keys = codecKeysFromEnv(env);
  if (keys.length === 0) return undefined;
  const allowUnencrypted = options.allowUnencrypted === true || env.YIEM_CODEC_ALLOW_UNENCRYPTED === '1';
  return new AesGcmPayloadCodec(keys, { allowUnencrypted });
}

/**
 * The converter workers, clients, the CLI, the codec server and replays share: the payload store of
 * `YIEM_PAYLOADS_DIR` (see `payloadStorageFromEnv`), encrypted when `YIEM_CODEC_KEYS` or
 * `YIEM_CODEC_KEY_FILE` is set. Undefined only when both are off: Temporal's default converter.
 */
export function dataConverterFromEnv(env: Record<string, string | undefined>): DataConverter | undefined {
  const codec = codecFromEnv(env);
  const storage = payloadStorageFromEnv(env);
  if (codec) return encryptedDataConverter(codec, storage);
  return storage ? { externalStorage: storage } : undefined;
}

/**
 * The store and codec keys of `converter`, as a worker announces them and a client compares them:
 * only what this package's own codec and filesystem store can tell.
 */
export async function storeAnnouncementOf(converter: DataConverter | undefined): Promise<StoreAnnouncement> {
  const codec = converter?.payloadCodecs?.find((candidate) => candidate instanceof AesGcmPayloadCodec);
  const store = await payloadStoreOf(converter?.externalStorage);
  return {
    ...(codec ? { codecKeys: codec.keyFingerprints() } : {}),
    ...(store ? { store: { id: store.id, location: store.location } } : {}),
  };
}
