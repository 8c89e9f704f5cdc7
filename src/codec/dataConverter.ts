import { fileURLToPath } from 'node:url';
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { type AesGcmCodecOptions, AesGcmPayloadCodec } from './aesGcmCodec.ts';
import { codecKeysFromEnv } from './keys.ts';

const ENCODING_FAILURE_CONVERTER = fileURLToPath(new URL('./failureConverter.cjs', import.meta.url));

/**
 * A data converter that runs every payload (inputs, results, updates, queries, summaries) through
 * `codec`, and failure messages and stack traces as well. A worker given a prebuilt workflow bundle
 * only encodes the failures of workflow code when the bundle was built with the same
 * `failureConverterPath`.
 */
export function encryptedDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: ENCODING_FAILURE_CONVERTER };
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

/** {@link encryptedDataConverter} with the codec from the environment; undefined when none is set. */
export function dataConverterFromEnv(env: Record<string, string | undefined>): DataConverter | undefined {
  const codec = codecFromEnv(env);
  return codec ? encryptedDataConverter(codec) : undefined;
}
