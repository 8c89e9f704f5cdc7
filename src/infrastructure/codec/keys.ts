import { readFileSync } from 'node:fs';
import { describeThrown } from '../../contract/thrown.ts';
import type { CodecKey } from './aesGcmCodec.ts';

/**
 * Parses keys written as `id:base64` entries, separated by commas or newlines, oldest first; blank
 * lines and `#` comments are ignored. The last key is the one that encrypts.
 *
 * @throws naming the entry that is not `id:base64` or does not decode to 32 bytes.
 */
export function parseCodecKeys(text: string, source: string): CodecKey[] {
  const entries = text
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '' && !entry.startsWith('#'));
  return entries.map((entry, index) => {
    const separator = entry.indexOf(':');
    const id = entry.slice(0, separator).trim();
    const encoded = entry.slice(separator + 1).trim();
    if (separator <= 0 || encoded === '') {
      throw new Error(`${source}: entry ${index + 1} is not "keyId:base64Key"`);
    }
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32) {
      throw new Error(
        `${source}: key "${id}" decodes to ${key.length} bytes; AES-256 needs 32 (openssl rand -base64 32)`,
      );
    }
    return { id, key };
  });
}

/**
 * The codec keys configured in the environment: `YIEM_CODEC_KEYS` (inline) and/or
 * `YIEM_CODEC_KEY_FILE` (a file, e.g. a mounted secret), file keys first. Empty when neither is set.
 */
export function codecKeysFromEnv(env: Record<string, string | undefined>): CodecKey[] {
  const keys: CodecKey[] = [];
  const file = env.YIEM_CODEC_KEY_FILE;
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`YIEM_CODEC_KEY_FILE=${file}: ${describeThrown(error)}`);
    }
    keys.push(...parseCodecKeys(text, `YIEM_CODEC_KEY_FILE=${file}`));
  }
  if (env.YIEM_CODEC_KEYS) keys.push(...parseCodecKeys(env.YIEM_CODEC_KEYS, 'YIEM_CODEC_KEYS'));
  return keys;
}
