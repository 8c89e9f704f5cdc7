export {
  type AesGcmCodecOptions,
  AesGcmPayloadCodec,
  type CodecKey,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  UNENCRYPTED_REFUSED,
  UnencryptedPayloadError,
} from './aesGcmCodec.ts';
export { type CodecServerOptions, type RunningCodecServer, startCodecServer } from './codecServer.ts';
export { codecFromEnv, dataConverterFromEnv, encryptedDataConverter } from './dataConverter.ts';
export { codecKeysFromEnv, parseCodecKeys } from './keys.ts';
