import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  AesGcmPayloadCodec,
  codecFromEnv,
  codecKeysFromEnv,
  parseCodecKeys,
  UNENCRYPTED_REFUSED,
} from '../../src/infrastructure/codec/index.ts';

const key = (id: string) => ({ id, key: randomBytes(32) });
const value = { secret: 'plain words' };
const payload = defaultPayloadConverter.toPayload(value);
const values = (payloads: Payload[]) => payloads.map((entry) => defaultPayloadConverter.fromPayload(entry));
const metadataText = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString();

describe('AesGcmPayloadCodec', () => {
  it('round-trips a payload and leaves none of its bytes in the clear', async () => {
    const codec = new AesGcmPayloadCodec([key('a')]);
    const [encoded] = await codec.encode([payload]);
    expect(Buffer.from(encoded?.data ?? []).includes('plain words')).toBe(false);
    expect(metadataText(encoded?.metadata?.encoding)).toBe('binary/encrypted');
    expect(metadataText(encoded?.metadata?.['encryption-key-id'])).toBe('a');
    expect(values(await codec.decode([encoded as never]))).toEqual([value]);
  });

  it('rotates: the newest key encrypts, older keys still decrypt', async () => {
    const old = key('2025');
    const current = key('2026');
    const [before] = await new AesGcmPayloadCodec([old]).encode([payload]);
    const rotated = new AesGcmPayloadCodec([old, current]);
    const [after] = await rotated.encode([payload]);
    expect(metadataText(after?.metadata?.['encryption-key-id'])).toBe('2026');
    expect(values(await rotated.decode([before as never, after as never]))).toEqual([value, value]);
  });

  it('refuses a payload whose key it lacks, and one that was tampered with', async () => {
    const [encoded] = await new AesGcmPayloadCodec([key('gone')]).encode([payload]);
    await expect(new AesGcmPayloadCodec([key('other')]).decode([encoded as never])).rejects.toThrow(
      'encrypted with key "gone"',
    );
    const codec = new AesGcmPayloadCodec([key('a')]);
    const [mine] = await codec.encode([payload]);
    const data = Buffer.from(mine?.data ?? []);
    data[20] = (data[20] ?? 0) ^ 1;
    await expect(codec.decode([{ ...mine, data }])).rejects.toThrow();
  });

  it('refuses unencrypted payloads, unless told to let them through while a namespace turns encryption on', async () => {
    await expect(new AesGcmPayloadCodec([key('a')]).decode([payload])).rejects.toThrow(UNENCRYPTED_REFUSED);
    expect(await new AesGcmPayloadCodec([key('a')], { allowUnencrypted: true }).decode([payload])).toEqual([
      payload,
    ]);
    const keys = `a:${randomBytes(32).toString('base64')}`;
    await expect(codecFromEnv({ YIEM_CODEC_KEYS: keys })?.decode([payload])).rejects.toThrow(
      UNENCRYPTED_REFUSED,
    );
    expect(
      await codecFromEnv({ YIEM_CODEC_KEYS: keys, YIEM_CODEC_ALLOW_UNENCRYPTED: '1' })?.decode([payload]),
    ).toEqual([payload]);
  });

  it('rejects keys of the wrong size, duplicate ids and an empty key list', () => {
    expect(() => new AesGcmPayloadCodec([])).toThrow('at least one key');
    expect(() => new AesGcmPayloadCodec([{ id: 'short', key: randomBytes(16) }])).toThrow('needs 32');
    expect(() => new AesGcmPayloadCodec([key('x'), key('x')])).toThrow('appears twice');
  });
});

describe('codec keys from the environment', () => {
  const b64 = () => randomBytes(32).toString('base64');

  it('reads id:base64 entries, oldest first, from YIEM_CODEC_KEY_FILE then YIEM_CODEC_KEYS', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-keys-'));
    try {
      const file = path.join(dir, 'keys');
      await writeFile(file, `# rotated yearly\nk1:${b64()}\n\nk2:${b64()}\n`);
      const keys = codecKeysFromEnv({ YIEM_CODEC_KEY_FILE: file, YIEM_CODEC_KEYS: `k3:${b64()}` });
      expect(keys.map((entry) => entry.id)).toEqual(['k1', 'k2', 'k3']);
      expect(codecKeysFromEnv({})).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names the bad entry or the missing file', () => {
    expect(() => parseCodecKeys('nocolon', 'X')).toThrow('X: entry 1 is not "keyId:base64Key"');
    expect(() => parseCodecKeys(`ok:${b64()},short:AAAA`, 'X')).toThrow('key "short" decodes to 3 bytes');
    expect(() => codecKeysFromEnv({ YIEM_CODEC_KEY_FILE: '/nonexistent/keys' })).toThrow(
      'YIEM_CODEC_KEY_FILE=/nonexistent/keys',
    );
  });
});
