import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';

/** The `encoding` metadata of a payload this codec encrypted. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata entry naming the key a payload was encrypted with. */
export const KEY_ID_METADATA = 'encryption-key-id';

// A CommonJS module: Node's ESM loader does not see its named exports.
const { Payload: PayloadProto } = proto.temporal.api.common.v1;
const CIPHER = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Why an unencrypted payload was not read. */
export const UNENCRYPTED_REFUSED =
  'Refused a payload that is not encrypted: this codec reads only payloads encrypted with its keys. The sender must use the same codec key; while migrating conversations started before encryption, set YIEM_CODEC_ALLOW_UNENCRYPTED=1 (or allowUnencrypted: true)';

/** Thrown on decoding a payload that is not encrypted, unless `allowUnencrypted` is set. */
export class UnencryptedPayloadError extends Error {
  override name = 'UnencryptedPayloadError';
}

/** One AES-256 key and the id written next to every payload it encrypts. */
export interface CodecKey {
  /** Names the key in each payload's metadata, so old payloads decrypt after a new key comes in. */
  id: string;
  /** 32 bytes. */
  key: Uint8Array;
}

/** Options of {@link AesGcmPayloadCodec}. */
export interface AesGcmCodecOptions {
  /**
   * Whether payloads that are not encrypted are read as they are. Default false: they are refused,
   * so a client without the key cannot write plaintext prompts into encrypted conversations. Turn it
   * on only while conversations started before encryption are still running.
   */
  allowUnencrypted?: boolean;
}

/**
 * Encrypts every payload with AES-256-GCM, so the Temporal server (and whoever reads its database)
 * only ever stores ciphertext. The last key encrypts; every key decrypts, which is how keys rotate:
 * append a new key, and histories written with the old ones still read.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  readonly #keys: Map<string, Uint8Array>;
  readonly #current: CodecKey;
  readonly #allowUnencrypted: boolean;

  /** @throws when there is no key, a key is not 32 bytes, or two keys share an id. */
  constructor(keys: CodecKey[], options: AesGcmCodecOptions = {}) {
    this.#allowUnencrypted = options.allowUnencrypted === true;
    const current = keys.at(-1);
    if (!current) throw new Error('AES-GCM payload codec: at least one key is required');
    this.#keys = new Map();
    for (const { id, key } of keys) {
      if (!id) throw new Error('AES-GCM payload codec: a key has an empty id');
      if (key.length !== KEY_BYTES) {
        throw new Error(`AES-GCM payload codec: key "${id}" has ${key.length} bytes, needs ${KEY_BYTES}`);
      }
      if (this.#keys.has(id)) throw new Error(`AES-GCM payload codec: key id "${id}" appears twice`);
      this.#keys.set(id, key);
    }
    this.#current = current;
  }

  /** The id of the key new payloads are encrypted with. */
  get currentKeyId(): string {
    return this.#current.id;
  }

  /**
   * `keyId:fingerprint` of every key, oldest first: the first 8 hex digits of the key's SHA-256, so
   * two processes can tell whether they hold the same keys without showing them.
   */
  keyFingerprints(): string[] {
    return [...this.#keys].map(
      ([id, key]) => `${id}:${createHash('sha256').update(key).digest('hex').slice(0, 8)}`,
    );
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.#encrypt(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.#decrypt(payload));
  }

  #encrypt(payload: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, this.#current.key, iv);
    const plaintext = PayloadProto.encode(payload).finish();
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return {
      metadata: {
        encoding: Buffer.from(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: Buffer.from(this.#current.id),
      },
      data: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]),
    };
  }

  #decrypt(payload: Payload): Payload {
    if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) {
      if (this.#allowUnencrypted) return payload;
      throw new UnencryptedPayloadError(UNENCRYPTED_REFUSED);
    }
    const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
    const key = this.#keys.get(keyId);
    if (!key) {
      throw new Error(`Payload was encrypted with key "${keyId}", which this codec does not have`);
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) throw new Error('Encrypted payload is truncated');
    const decipher = createDecipheriv(CIPHER, key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    const plaintext = Buffer.concat([
      decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
      decipher.final(),
    ]);
    const { metadata, data: original } = PayloadProto.decode(plaintext);
    return { metadata, data: original };
  }
}

function text(bytes: Uint8Array | null | undefined): string {
  return bytes ? Buffer.from(bytes).toString('utf8') : '';
}
